import { Clock, systemClock } from '../common/clock';
import { MessagingTopology } from '../topology/messaging-topology';
import { ApproverKeyring, publicKeyId } from './approvals/approver-keyring';
import { ApproverSigner } from './approvals/approver-keys';
import { checkFourEyes } from './approvals/four-eyes';
import { RedriveRefusedError } from './errors/redrive-refused.error';
import { AuditOverride, RedriveLedger } from './ledger/redrive-ledger.interface';
import { reviewPlan } from './plan-review';
import { checkPinnedKeyring, checkPinnedTopology } from './pinned-fingerprints';
import { ApprovalGrant, approvalEvidence, RedriveApproval, signApproval } from './redrive-approval';
import { RedrivePlan } from './redrive-plan';
import { isReplayPlan, ReplayPlan } from './replay/replay-plan';

/** What `issueApproval()` needs besides the plan and the signer. */
export interface IssueApprovalOptions extends ApprovalGrant {
  /** Where the approval (or its refusal) is recorded, and where the plan's PLAN entry is looked up. */
  readonly ledger: RedriveLedger;
  /**
   * The reviewed keyring with its identity map: the approver is then refused as the planner's person, not
   * only under the planner's name. Default: names are compared (the executor checks people again).
   */
  readonly keyring?: ApproverKeyring;
  /** The topology the plan's route is derived with (needed for a DLQ name that reads two ways). */
  readonly topology?: MessagingTopology;
  /**
   * The safety checks the approving run skipped (e.g. the console's `RedriveService.overrides`), recorded in
   * its APPROVE or REFUSE entry. Default: none (the ledger still adds its own).
   */
  readonly overrides?: readonly AuditOverride[];
  /** The clock the approval is dated by (the library's `Clock`; only `now` is read). Default: the system clock. */
  readonly clock?: Pick<Clock, 'now'>;
}

/**
 * An approver signs `plan` with their own key (no broker credential is involved), and the approval goes to
 * the audit log. Before signing, the plan is checked as the executor will check it: its route is the one
 * its source derives, the audit log holds its PLAN entry, the keyring and the topology are the ones the
 * admin database pins, and the approver is not the planner that entry names. The APPROVE entry keeps the
 * approval's evidence (nonce, signature, times, key id). A refusal (an edited plan, the approver made the
 * plan) is recorded too.
 */
export async function issueApproval(
  plan: RedrivePlan | ReplayPlan,
  signer: ApproverSigner,
  options: IssueApprovalOptions,
): Promise<RedriveApproval> {
  const entry = {
    actor: signer.approver,
    approver: signer.approver,
    transport: plan.transport,
    source: plan.source,
    target: plan.target || undefined,
    planHash: plan.hash,
    ...(isReplayPlan(plan) ? {} : { messageIds: plan.messages.map((m) => m.messageId) }),
    ...(options.overrides?.length ? { overrides: options.overrides } : {}),
  };
  let approval: RedriveApproval;
  const keyring = options.keyring ?? ApproverKeyring.empty();
  try {
    if (options.keyring) await checkPinnedKeyring(options.ledger, keyring);
    await checkPinnedTopology(options.ledger, options.topology);
    const planner = await reviewPlan(plan, options.ledger, options.topology);
    checkFourEyes(keyring, { planner, approver: signer.approver }, false);
    approval = signApproval(plan, signer, options, new Date((options.clock ?? systemClock).now()));
  } catch (error) {
    if (error instanceof RedriveRefusedError) {
      await options.ledger.record({
        ...entry,
        action: 'REFUSE',
        outcome: error.guard,
        detail: error.message,
      });
    }
    throw error;
  }
  await options.ledger.record({
    ...entry,
    action: 'APPROVE',
    outcome: 'APPROVED',
    detail: `valid until ${approval.expiresAt}`,
    // The signer's own key id: the keyring may hold none for them yet (the executor's check refuses then).
    evidence: { ...approvalEvidence(approval, keyring), keyId: publicKeyId(signer.key) },
  });
  return approval;
}
