import { RedriveRefusedError } from './redrive-refused.error';

/**
 * A plan at scale (`RedrivePlan.bulk`, made by `planBulk()`) was given to `execute()`, or a plan of at most
 * 100 messages to `executeBulk()`: each runs with its own. Nothing was claimed or moved.
 */
export class RedrivePlanKindError extends RedriveRefusedError {
  /** The guard that refused: `BATCH_LIMIT` (how many messages a plan may move, and how). */
  readonly guard = 'BATCH_LIMIT' as const;

  constructor(
    /** The plan's dead-letter destination. */
    readonly source: string,
    /** Whether the plan given is one at scale. */
    readonly atScale: boolean,
  ) {
    super(
      atScale
        ? `Redrive refused: the plan for ${source} is a plan at scale; execute it with executeBulk() ` +
            '(nest-messaging dlq redrive does). Nothing was moved.'
        : `Redrive refused: the plan for ${source} lists its messages; execute it with execute(). Nothing was moved.`,
    );
    this.name = 'RedrivePlanKindError';
  }
}
