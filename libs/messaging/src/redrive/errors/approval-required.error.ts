import { RedriveRefusedError } from './redrive-refused.error';

/**
 * Execute was given something other than a plan approved by this `RedriveService` (a plain plan, a forged
 * object, or an approved plan already executed). Approve the plan with `approve(plan, approval)` first.
 */
export class ApprovalRequiredError extends RedriveRefusedError {
  /** The guard that refused: always `APPROVAL`. */
  readonly guard = 'APPROVAL' as const;

  constructor(reason: string) {
    super(
      `Redrive refused: ${reason}. Approve the plan first (nest-messaging dlq approve), then redrive it.`,
    );
    this.name = 'ApprovalRequiredError';
  }
}
