import { createPublicKey } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ApproverSigner } from '../dead-letter/redrive/approvals/approver-keys';
import { ApprovalMismatchError } from '../dead-letter/redrive/errors/approval-mismatch.error';
import { RedrivePlanStaleError } from '../dead-letter/redrive/errors/redrive-plan-stale.error';
import { RedriveRefusedError } from '../dead-letter/redrive/errors/redrive-refused.error';
import { issueApproval } from '../dead-letter/redrive/issue-approval';
import { PlanAction, PlanSelection } from '../dead-letter/redrive/plan-selection';
import { RedriveLimits } from '../dead-letter/redrive/redrive-limits';
import { MessagingConsoleOptions } from './console-options.interface';
import { ConsolePlan, ConsolePlans } from './console-plans';
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
  readonly plans = new ConsolePlans();

  constructor(@Inject(MESSAGING_CONSOLE_OPTIONS) private readonly options: MessagingConsoleOptions) {
    for (const signer of options.approverSigners ?? []) this.checkTrusted(signer);
  }

  /** A dry run of the first `limit` messages of `source`, planned by the signed-in operator. */
  async plan(session: ConsoleSession, source: string, limit: number): Promise<ConsolePlan> {
    const plan = await this.options.redrive.plan({ source, limit, plannedBy: session.user.name });
    return this.plans.add(plan);
  }

  /** A dry run of a selection (a group, picked ids, a filter), to redrive or discard, by the signed-in operator. */
  async planSelection(
    session: ConsoleSession,
    source: string,
    selection: PlanSelection,
    action: PlanAction,
  ): Promise<ConsolePlan> {
    const plan = await this.options.redrive.plan({ source, selection, action, plannedBy: session.user.name });
    return this.plans.add(plan);
  }

  /** Signs an approval of the plan with the signed-in approver's key. */
  async approve(session: ConsoleSession, entry: ConsolePlan): Promise<StepOutcome> {
    const name = session.user.name;
    if (entry.approval || entry.result) return refused(409, 'This plan is approved already.');
    const { redrive } = this.options;
    // With an identity map, the key of the signed-in person (one of their accounts); else of this name.
    const person = redrive.approvers.hasIdentityMap ? redrive.approvers.personOf(name) : name;
    const signer = this.options.approverSigners?.find((s) => s.approver === person);
    if (!signer) return refused(403, `No approver key is configured for ${name} in this console.`);
    try {
      const ttlMs = this.options.approvalTtlMs ?? RedriveLimits.DEFAULT_APPROVAL_TTL_MS;
      entry.approval = await issueApproval(entry.plan, signer, {
        ledger: this.options.ledger,
        keyring: redrive.approvers,
        topology: redrive.topology,
        ttlMs,
        now: this.options.clock?.(),
      });
      entry.refusal = undefined;
      return { ok: true };
    } catch (error) {
      return this.refusal(entry, error);
    }
  }

  /** Executes an approved plan as the signed-in operator; the result (or refusal) stays with the plan. */
  async execute(session: ConsoleSession, entry: ConsolePlan): Promise<StepOutcome> {
    if (entry.result) return refused(409, `This plan ran already: redrive ${entry.result.redriveId}.`);
    const { redrive } = this.options;
    try {
      const approved = await redrive.approve(entry.plan, entry.approval, session.user.name);
      entry.result = await redrive.execute(approved);
      entry.refusal = undefined;
      return { ok: true };
    } catch (error) {
      return this.refusal(entry, error);
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

  private refusal(entry: ConsolePlan, error: unknown): StepOutcome {
    if (!(error instanceof RedriveRefusedError)) throw error;
    const message =
      error instanceof ApprovalMismatchError && error.mismatch === 'SELF_APPROVAL'
        ? `Four eyes: the person who made or runs a plan may not approve it. (${error.message})`
        : error instanceof RedrivePlanStaleError
          ? `Stale plan: the dead-letter queue changed since this plan was made, so nothing was moved. Plan again. (${error.message})`
          : `Refused (${error.guard}): ${error.message}`;
    entry.refusal = message;
    return refused(409, message);
  }
}

function refused(status: number, message: string): StepOutcome {
  return { ok: false, status, message };
}
