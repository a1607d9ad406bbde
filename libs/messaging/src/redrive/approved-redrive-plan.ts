import { RedriveApproval } from './redrive-approval';
import { RedrivePlan } from './redrive-plan';

/** Not exported: nothing outside this module can name the brand, so no object literal passes for one. */
declare const approved: unique symbol;

/**
 * A plan together with an approval that was checked against it. The only way to get one is
 * `RedriveService.approve()`, and `execute()` accepts nothing else: an unapproved plan does not compile,
 * and a forged object is refused at run time (the service remembers the ones it issued).
 */
export interface ApprovedRedrivePlan {
  /** Compile-time brand only (absent at run time): no object literal passes for an approved plan. */
  readonly [approved]: true;
  /** The plan, exactly as it was approved. */
  readonly plan: RedrivePlan;
  /** The approval that was verified against `plan`. */
  readonly approval: RedriveApproval;
}

/** Brands a checked plan (for `RedriveService` only). */
export function brandApproved(plan: RedrivePlan, approval: RedriveApproval): ApprovedRedrivePlan {
  return Object.freeze({ plan, approval }) as unknown as ApprovedRedrivePlan;
}
