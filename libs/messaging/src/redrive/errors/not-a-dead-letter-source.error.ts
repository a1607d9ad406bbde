import { RedriveRefusedError } from './redrive-refused.error';

/**
 * The source is not a dead-letter destination (its name is not `<destination>.<group>.dlq`, or it holds
 * messages that are not dead-letter copies): a redrive never drains a live destination.
 */
export class NotADeadLetterSourceError extends RedriveRefusedError {
  /** The guard that refused: always `SOURCE`. */
  readonly guard = 'SOURCE' as const;

  constructor(
    /** The destination that was named as the source. */
    readonly source: string,
    /** Why it is not a dead-letter destination. */
    readonly reason: string,
  ) {
    super(
      `Redrive refused: '${source}' is not a dead-letter destination (${reason}). Name a ` +
        "'<destination>.<group>.dlq' (nest-messaging dlq list shows them).",
    );
    this.name = 'NotADeadLetterSourceError';
  }
}
