import { RedriveRefusedError } from './redrive-refused.error';

/** A redrive batch may hold at most `max` messages (spec §3: 100). Redrive a large DLQ in several batches. */
export class RedriveBatchTooLargeError extends RedriveRefusedError {
  readonly guard = 'BATCH_LIMIT' as const;

  constructor(
    readonly requested: number,
    readonly max: number,
  ) {
    super(
      `A redrive moves at most ${max} messages per batch; ${requested} were asked for. Plan, approve and ` +
        `redrive several batches instead.`,
    );
    this.name = 'RedriveBatchTooLargeError';
  }
}
