import { RedriveRefusedError } from './redrive-refused.error';

/**
 * Another redrive holds this dead-letter destination right now (an exclusive hold in the admin database):
 * two redrives of one DLQ would publish its messages twice. Wait for it to finish, then plan again.
 */
export class RedriveInProgressError extends RedriveRefusedError {
  /** The guard that refused: always `IN_PROGRESS`. */
  readonly guard = 'IN_PROGRESS' as const;

  constructor(
    /** The dead-letter destination another redrive holds. */
    readonly source: string,
  ) {
    super(
      `Redrive refused: another redrive of ${source} is running. Wait for it to finish (nest-messaging dlq ` +
        'history shows it), then plan again.',
    );
    this.name = 'RedriveInProgressError';
  }
}
