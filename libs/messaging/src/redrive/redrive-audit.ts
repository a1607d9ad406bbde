import { AuditOverride, RedriveAuditEntry, RedriveLedger } from './ledger/redrive-ledger.interface';
import { RedriveRefusedError } from './errors/redrive-refused.error';
import { archiveOf } from './dead-letter-archive';
import { editDetail, planDetail } from './plan-contents';
import { RedriveApproval } from './redrive-approval';
import { RedrivePlan } from './redrive-plan';
import { RedriveResult } from './redrive-result';

/** The fields of an audit entry an operation knows before its outcome. */
export type AuditBase = Omit<RedriveAuditEntry, 'outcome' | 'actor' | 'transport'> &
  Partial<RedriveAuditEntry>;

/** What an audit entry about `plan` (and its approval) says of it: source, target, hash, approver, messages. */
export function planFields(
  plan: RedrivePlan,
  approval?: RedriveApproval,
): Pick<RedriveAuditEntry, 'source' | 'target' | 'planHash' | 'approver' | 'messageIds'> {
  return {
    source: plan.source,
    target: plan.target || undefined,
    planHash: plan.hash,
    approver: approval?.approver,
    messageIds: plan.messages.map((m) => m.messageId),
  };
}

/**
 * `RedriveService`'s bookkeeping in the audit log: the fields of an operation on a plan, the PLAN and
 * EXECUTE entries, and every refusal, recorded before it is rethrown.
 */
export class RedriveAudit {
  constructor(
    private readonly ledger: RedriveLedger,
    private readonly transport: 'kafka' | 'rabbitmq',
    /** The admin credential's principal: the actor when an operation names none. */
    private readonly principal: string,
    /** The safety checks this service's broker connection skipped: every entry it writes carries them. */
    private readonly overrides: readonly AuditOverride[] = [],
  ) {}

  /** The audit fields of an operation on `plan`. */
  entry(
    action: RedriveAuditEntry['action'],
    plan: RedrivePlan,
    approval?: RedriveApproval,
    actor: string = this.principal,
  ): Omit<RedriveAuditEntry, 'outcome'> {
    return { action, actor, transport: this.transport, ...planFields(plan, approval), ...this.overridden() };
  }

  /** Runs `work`; a refusal is recorded in the audit log before it is rethrown. */
  async refusalsOf<T>(base: AuditBase, work: () => Promise<T> | never): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof RedriveRefusedError) {
        await this.ledger.record({
          actor: this.principal,
          transport: this.transport,
          ...base,
          ...this.overridden(),
          action: 'REFUSE',
          outcome: error.guard,
          detail: `${base.action}: ${error.message}`,
        });
      }
      throw error;
    }
  }

  /** `{ overrides }` when this service skipped a safety check, else nothing (the entry hashes as before). */
  private overridden(): Pick<RedriveAuditEntry, 'overrides'> {
    return this.overrides.length > 0 ? { overrides: this.overrides } : {};
  }

  /** The PLAN entry of a dry run `actor` made. */
  async planned(plan: RedrivePlan, actor: string): Promise<void> {
    await this.ledger.record({
      ...this.entry('PLAN', plan, undefined, actor),
      outcome: 'PLANNED',
      detail: planDetail(plan),
    });
  }

  /** The EXECUTE entry of an execution that ran: what moved, what was left. */
  async executed(
    base: Omit<RedriveAuditEntry, 'outcome'>,
    result: RedriveResult,
    plan?: RedrivePlan,
  ): Promise<void> {
    if (plan?.edit) {
      await this.ledger.record({
        ...base,
        messageIds: [plan.edit.messageId],
        outcome: result.leftInSource > 0 ? 'INCOMPLETE' : 'EDITED',
        detail: `${editDetail(plan.edit)}; ${result.redriven === 1 ? `published to ${result.target}, original archived in ${archiveOf(plan.source)}` : 'nothing moved, the original is still in the source'}`,
      });
      return;
    }
    const discard = result.action === 'discard';
    await this.ledger.record({
      ...base,
      messageIds: result.messages.filter((m) => m.status === 'REDRIVEN').map((m) => m.messageId),
      outcome: result.leftInSource > 0 ? 'INCOMPLETE' : discard ? 'ARCHIVED' : 'REDRIVEN',
      detail: `${result.redriven} ${discard ? `archived in ${result.target}` : 'redriven'}, ${result.leftInSource} left in the source`,
    });
  }
}
