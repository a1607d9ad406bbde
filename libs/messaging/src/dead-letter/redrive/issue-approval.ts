import { ApproverSigner } from './approvals/approver-keys';
import { RedriveRefusedError } from './errors/redrive-refused.error';
import { RedriveLedger } from './ledger/redrive-ledger.interface';
import { ApprovalGrant, RedriveApproval, signApproval } from './redrive-approval';
import { RedrivePlan } from './redrive-plan';

/** What `issueApproval()` needs besides the plan and the signer. */
export interface IssueApprovalOptions extends ApprovalGrant {
  /** Where the approval (or its refusal) is recorded. */
  readonly ledger: RedriveLedger;
  /** Default: the system clock. */
  readonly now?: Date;
}

/**
 * An approver signs `plan` with their own key (no broker credential is involved), and the approval goes to
 * the audit log; a refusal (an edited plan, the approver made the plan) is recorded too.
 */
export async function issueApproval(
  plan: RedrivePlan,
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
    messageIds: plan.messages.map((m) => m.messageId),
  };
  let approval: RedriveApproval;
  try {
    approval = signApproval(plan, signer, options, options.now ?? new Date());
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
  });
  return approval;
}
