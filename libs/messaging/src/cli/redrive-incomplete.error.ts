import { MessagingError } from '../errors/messaging.error';

/** A redrive ran but some messages were not confirmed by the target: they stay in the DLQ (exit 1). */
export class RedriveIncompleteError extends MessagingError {
  constructor(
    readonly left: number,
    readonly source: string,
    readonly target: string,
  ) {
    super(
      `${left} message(s) were not confirmed by ${target} and stay in ${source}; plan again once the target ` +
        'accepts messages.',
    );
    this.name = 'RedriveIncompleteError';
  }
}
