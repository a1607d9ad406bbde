import { RedriveRefusedError } from './redrive-refused.error';

/** A redrive batch may hold at most `max` messages (100: docs/guide/08-redrive.md). Redrive a large DLQ in several batches. */
export class RedriveBatchTooLargeError extends RedriveRefusedError {
  /** The guard that refused: always `BATCH_LIMIT`. */
  readonly guard = 'BATCH_LIMIT' as const;

  constructor(
    /** How many messages were asked for (the request's `limit`, or the plan's message count). */
    readonly requested: number,
    /** The most a batch may hold (`RedriveLimits.MAX_BATCH`). */
    readonly max: number,
  ) {
    super(
      `A redrive moves at most ${max} messages per batch; ${requested} were asked for. Plan, approve and ` +
        `redrive several batches instead.`,
    );
    this.name = 'RedriveBatchTooLargeError';
  }
}
