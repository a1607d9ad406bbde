import { MessagingTopology } from '../topology/messaging-topology';
import { ApproverKeyring } from './approvals/approver-keyring';
import { checkFourEyes } from './approvals/four-eyes';
import { ApprovalMismatchError } from './errors/approval-mismatch.error';
import { RedrivePlanStaleError } from './errors/redrive-plan-stale.error';
import { RedriveLedger } from './ledger/redrive-ledger.interface';
import { reviewPlan } from './plan-review';
import { checkPinnedKeyring, checkPinnedTopology } from './pinned-fingerprints';
import { RedriveApproval, verifyApproval } from './redrive-approval';
import { checkDistinctTarget, checkPlannedCount } from './redrive-guards';
import { RedriveLimits } from './redrive-limits';
import { RedrivePlan } from './redrive-plan';
import { checkTarget } from './redrive-route';
import { ReplayPlan } from './replay/replay-plan';

/** What an approved plan is checked against. */
export interface VerificationContext {
  readonly ledger: RedriveLedger;
  readonly topology?: MessagingTopology;
  readonly approvers: ApproverKeyring;
  /** The admin credential's principal: may not approve either. */
  readonly principal: string;
  /** False in local development, where four eyes may go without an identity map. */
  readonly requireIdentityMap: boolean;
  /** Now, for the approval's expiry. */
  readonly now: Date;
}

/** Refuses a plan that cannot run on this broker as it stands: too many messages, a forbidden target, another broker. */
export function checkPlanShape(plan: RedrivePlan, transport: 'kafka' | 'rabbitmq'): void {
  checkPlannedCount(plan.messages.length);
  if (plan.messages.length > 0) {
    checkDistinctTarget(plan.source, plan.target);
    checkTarget(plan.source, plan.target);
  }
  if (plan.transport !== transport) {
    throw new RedrivePlanStaleError(plan.source, `the plan was made on ${plan.transport}, not ${transport}`);
  }
}

/**
 * The plan is the one `plan()` made (route, audit log), the keyring and the topology are the ones the admin
 * database pins (if any), the approval is valid for it, and four eyes holds
 * between the planner the audit log names, the approver, the executor and the credential's owner.
 */
export async function verifyApprovedPlan(
  plan: RedrivePlan | ReplayPlan,
  approval: RedriveApproval,
  executedBy: string,
  context: VerificationContext,
): Promise<void> {
  // The trust roots first: a route derived with a topology the database does not pin proves nothing.
  await checkPinnedKeyring(context.ledger, context.approvers);
  await checkPinnedTopology(context.ledger, context.topology);
  const planner = await reviewPlan(plan, context.ledger, context.topology);
  verifyApproval(plan, approval, context.approvers, context.now);
  await checkNotPostDated(approval, context.ledger);
  checkFourEyes(
    context.approvers,
    { planner, approver: approval.approver, executor: executedBy, credential: context.principal },
    context.requireIdentityMap,
  );
}

/**
 * Refuses an approval dated later than the audit log's APPROVE entry for its nonce (the database's time),
 * beyond the clock skew allowed (issue 45, finding 14): `approvedAt` is the approver's clock, and an approval
 * dated next month would otherwise become valid then, outliving the approver's intent. An approval with no
 * such entry (signed outside `dlq approve` / `issueApproval()`) is not bounded here.
 */
async function checkNotPostDated(approval: RedriveApproval, ledger: RedriveLedger): Promise<void> {
  const recordedAt = await ledger.approvalRecordedAt?.(approval.nonce);
  if (recordedAt && Date.parse(approval.approvedAt) > recordedAt.getTime() + RedriveLimits.CLOCK_SKEW_MS) {
    throw new ApprovalMismatchError('POST_DATED');
  }
}
