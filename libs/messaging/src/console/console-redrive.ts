import { createPublicKey } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { Clock, systemClock } from '../common/clock';
import { ApproverSigner } from '../redrive/approvals/approver-keys';
import { ApprovalMismatchError } from '../redrive/errors/approval-mismatch.error';
import { RedrivePlanStaleError } from '../redrive/errors/redrive-plan-stale.error';
import { RedriveRefusedError } from '../redrive/errors/redrive-refused.error';
import { issueApproval } from '../redrive/issue-approval';
import { planFields } from '../redrive/redrive-audit';
import { PlanAction, PlanSelection } from '../redrive/plan-selection';
import { RedriveLimits } from '../redrive/redrive-limits';
import { MessageEditRequest } from '../redrive/edit/message-edit';
import { MessagingConsoleOptions } from './console-options.interface';
import { ConsolePlan, ConsolePlanState, planState } from './plans/console-plan';
import { ConsolePlanStore } from './plans/console-plan-store.interface';
import { MemoryConsolePlanStore } from './plans/memory-console-plan-store';
import { ConsoleSession } from './console-sessions';
import { MESSAGING_CONSOLE_OPTIONS } from './messaging-console.module-definition';

/** What a console step came to: done, or refused with a message for the user. */
export type StepOutcome =
  { readonly ok: true } | { readonly ok: false; readonly status: number; readonly message: string };

/**
 * Plan, approve and execute from the console, on the application's one `RedriveService` (the CLI's): the
 * console adds who the signed-in person is. The planner is the signed-in operator; an approval is signed
 * with the signed-in approver's own key, never a name typed in a form; the executor is the signed-in
 * operator. The service enforces four eyes on those names, exactly as for the CLI.
 */
@Injectable()
export class ConsoleRedrive {
  /** Where the plans are kept: the application's store, else this process's memory. */
  readonly plans: ConsolePlanStore;
  private readonly clock: Pick<Clock, 'now'>;

  constructor(@Inject(MESSAGING_CONSOLE_OPTIONS) private readonly options: MessagingConsoleOptions) {
    for (const signer of options.approverSigners ?? []) this.checkTrusted(signer);
    this.clock = options.clock ?? systemClock;
    this.plans = options.planStore ?? new MemoryConsolePlanStore(this.clock);
  }

  /** A dry run of the first `limit` messages of `source`, planned by the signed-in operator. */
  async plan(session: ConsoleSession, source: string, limit: number): Promise<ConsolePlan> {
    const plan = await this.options.redrive.plan({ source, limit, plannedBy: session.user.name });
    return this.plans.add(plan);
  }

  /** Where the plan stands now, against the other plans of its source. */
  async stateOf(entry: ConsolePlan) {
    const others = await this.plans.list({ source: entry.plan.source, limit: 200 });
    return planState(entry, others, this.now(), this.options.planTtlMs);
  }

  /** A dry run of a selection (a group, picked ids, a filter), to redrive or discard, by the signed-in operator. */
  async planSelection(
    session: ConsoleSession,
    source: string,
    selection: PlanSelection,
    action: Exclude<PlanAction, 'edit'>,
  ): Promise<ConsolePlan> {
    const plan = await this.options.redrive.plan({ source, selection, action, plannedBy: session.user.name });
    return this.plans.add(plan);
  }

  /**
   * An edit of one dead letter, planned by the signed-in operator (`RedriveService.planEdit`): approved and
   * executed like any plan from then on.
   */
  async planEdit(
    session: ConsoleSession,
    request: Omit<MessageEditRequest, 'plannedBy'>,
  ): Promise<ConsolePlan> {
    const plan = await this.options.redrive.planEdit({ ...request, plannedBy: session.user.name });
    return this.plans.add(plan);
  }

  /** Signs an approval of the plan with the signed-in approver's key. */
  async approve(session: ConsoleSession, entry: ConsolePlan): Promise<StepOutcome> {
    const name = session.user.name;
    const state = await this.stateOf(entry);
    if (state.kind !== 'waiting') return this.notNow(session, entry, state, 'APPROVE');
    const { redrive } = this.options;
    // With an identity map, the key of the signed-in person (one of their accounts); else of this name.
    const person = redrive.approvers.hasIdentityMap ? redrive.approvers.personOf(name) : name;
    const signer = this.options.approverSigners?.find((s) => s.approver === person);
    if (!signer) return refused(403, `No approver key is configured for ${name} in this console.`);
    try {
      const ttlMs = this.options.approvalTtlMs ?? RedriveLimits.DEFAULT_APPROVAL_TTL_MS;
      const approval = await issueApproval(entry.plan, signer, {
        ledger: this.options.ledger,
        keyring: redrive.approvers,
        topology: redrive.topology,
        overrides: redrive.overrides,
        ttlMs,
        clock: this.clock,
      });
      if (!(await this.plans.approved(entry.id, approval, name))) {
        return refused(409, 'This plan was approved or executed meanwhile.');
      }
      return { ok: true };
    } catch (error) {
      return this.refusal(entry, name, error);
    }
  }

  /** Executes an approved plan as the signed-in operator; the result (or refusal) stays with the plan. */
  async execute(session: ConsoleSession, entry: ConsolePlan): Promise<StepOutcome> {
    const state = await this.stateOf(entry);
    if (state.kind !== 'approved') return this.notNow(session, entry, state, 'EXECUTE');
    const { redrive } = this.options;
    const name = session.user.name;
    try {
      const approved = await redrive.approve(entry.plan, entry.approval, name);
      const result = await redrive.execute(approved);
      // The nonce makes an approval run once: a second result for the plan cannot happen.
      await this.plans.executed(entry.id, result, name);
      return { ok: true };
    } catch (error) {
      if (error instanceof RedrivePlanStaleError) await this.plans.stale(entry.id);
      return this.refusal(entry, name, error);
    }
  }

  /**
   * The console signs only with keys of the reviewed keyring: a key whose name the keyring does not know,
   * or whose public half differs from the keyring's, stops the console at startup.
   */
  private checkTrusted(signer: ApproverSigner): void {
    const trusted = this.options.redrive.approvers.publicKeyOf(signer.approver);
    const problem = !trusted
      ? 'is not in the reviewed keyring the redrive trusts (MESSAGING_ADMIN_APPROVERS)'
      : !createPublicKey(signer.key).equals(trusted)
        ? 'does not match the public key the reviewed keyring holds for that name'
        : undefined;
    if (problem) {
      throw new Error(
        `MessagingConsoleModule: the approver key of '${signer.approver}' ${problem}. Add its public key to ` +
          'the keyring through its review, or take the key away from the console.',
      );
    }
  }

  /**
   * Refuses a step the plan's state does not allow, before the redrive service (which would refuse it
   * too, later): recorded in the audit log like the service's refusals, and kept for the person refused.
   */
  private async notNow(
    session: ConsoleSession,
    entry: ConsolePlan,
    state: ConsolePlanState,
    step: 'APPROVE' | 'EXECUTE',
  ): Promise<StepOutcome> {
    const message = notNow(state, step === 'APPROVE' ? 'approved' : 'executed');
    const { plan, approval } = entry;
    await this.options.ledger.record({
      action: 'REFUSE',
      actor: session.user.name,
      transport: plan.transport,
      ...planFields(plan, approval),
      outcome: REFUSED_AS[state.kind],
      detail: `${step} refused by the console: ${message}`,
    });
    await this.plans.refused(entry.id, session.user.name, message);
    return refused(409, message);
  }

  private now(): Date {
    return new Date(this.clock.now());
  }

  private async refusal(entry: ConsolePlan, by: string, error: unknown): Promise<StepOutcome> {
    if (!(error instanceof RedriveRefusedError)) throw error;
    const message =
      error instanceof ApprovalMismatchError && error.mismatch === 'SELF_APPROVAL'
        ? `Four eyes: the person who made or runs a plan may not approve it. (${error.message})`
        : error instanceof RedrivePlanStaleError
          ? `Stale plan: the dead-letter queue changed since this plan was made, so nothing was moved. Plan again. (${error.message})`
          : `Refused (${error.guard}): ${error.message}`;
    await this.plans.refused(entry.id, by, message);
    return refused(409, message);
  }
}

/** The audit log's outcome for a step refused in each state (as the redrive's guards name them). */
const REFUSED_AS: Record<ConsolePlanState['kind'], string> = {
  waiting: 'APPROVAL',
  approved: 'ALREADY_APPROVED',
  executed: 'APPROVAL_USED',
  stale: 'STALE_PLAN',
  expired: 'APPROVAL_EXPIRED',
};

/** Why a plan in `state` cannot be `step` now. */
function notNow(state: ConsolePlanState, step: 'approved' | 'executed'): string {
  switch (state.kind) {
    case 'executed':
      return `This plan ran already: redrive ${state.redriveId}.`;
    case 'stale':
      return `Stale plan: ${state.why}. Nothing was moved. Plan again.`;
    case 'expired':
      return `Expired plan: ${state.why}. Nothing was moved. Plan again.`;
    case 'approved':
      return 'This plan is approved already.';
    case 'waiting':
      return `This plan cannot be ${step} yet: it waits for an approval by another person.`;
  }
}

function refused(status: number, message: string): StepOutcome {
  return { ok: false, status, message };
}
