import { RedriveRefusedError } from './redrive-refused.error';

/**
 * The plan is not the one `plan()` made: its route is not the one its source derives, or the audit log has
 * no plan with its hash (the file was edited and its hash recomputed, or it comes from another admin
 * database), or it names another planner than the audit log. Nothing was approved or moved. Plan again.
 */
export class RedrivePlanAlteredError extends RedriveRefusedError {
  /** The guard that refused: always `PLAN_ALTERED`. */
  readonly guard = 'PLAN_ALTERED' as const;

  constructor(
    /** The plan's dead-letter destination. */
    readonly source: string,
    /** What differs, one entry each, e.g. `target: the plan says 'a', orders.billing.dlq derives 'b'`. */
    readonly differences: readonly string[],
  ) {
    super(
      `Redrive refused: the plan for ${source} is not the one that was made (${differences.join('; ')}). ` +
        'Nothing was approved or moved: plan again with nest-messaging dlq plan, and approve the new plan.',
    );
    this.name = 'RedrivePlanAlteredError';
  }
}
