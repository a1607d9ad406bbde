import { RedriveRefusedError } from './redrive-refused.error';

/**
 * The dead-letter destination no longer starts with the planned messages (another redrive moved them, or a
 * reader took them): nothing was moved. Plan again and have the new plan approved.
 */
export class RedrivePlanStaleError extends RedriveRefusedError {
  /** The guard that refused: always `STALE_PLAN`. */
  readonly guard = 'STALE_PLAN' as const;

  constructor(
    /** The plan's dead-letter destination. */
    readonly source: string,
    /** What no longer matches, e.g. `the message at position 0 is not the planned one`. */
    readonly detail: string,
  ) {
    super(`The plan for ${source} is out of date (${detail}); nothing was moved. Plan and approve again.`);
    this.name = 'RedrivePlanStaleError';
  }
}
