import { MessagingMetrics } from '../observability/messaging-metrics';
import { KeySecret } from '../failure/key-secret';
import { MessagingTopology } from '../topology/messaging-topology';
import { archiveCopy, archiveOf } from './dead-letter-archive';
import { editClaimOf } from './edit/edit-claim';
import { checkEditRead } from './edit/edit-checks';
import { editedCopy } from './edit/edited-copy';
import { EditAlreadyClaimedError } from './errors/edit-already-claimed.error';
import { editDetail } from './plan-contents';
import { DeadLetterBackend } from './dead-letter-backend.interface';
import { ApprovalAlreadyUsedError } from './errors/approval-already-used.error';
import { RedriveAuditEntry, RedriveLedger } from './ledger/redrive-ledger.interface';
import { RedriveApproval } from './redrive-approval';
import { redriveCopy } from './redrive-headers';
import { checkDescriptions, checkUniquePositions } from './plan-descriptions';
import { RedrivePlan } from './redrive-plan';
import { MessageRedriveOutcome, RedriveResult } from './redrive-result';
import { checkRecords, deriveRoute } from './redrive-route';
import { restoreKey } from './restore-key';

/** What an execution moves messages with. */
export interface ExecutionContext {
  readonly backend: DeadLetterBackend;
  readonly ledger: RedriveLedger;
  readonly topology?: MessagingTopology;
  readonly keySecret?: KeySecret;
  /** Header names a redriven copy keeps besides the library's own (`RedriveServiceOptions.carryHeaders`). */
  readonly carryHeaders?: readonly string[];
  readonly metrics?: Pick<MessagingMetrics, 'redriven'>;
}

/** Who runs which approval of a plan, under which redrive id. */
export interface Execution {
  readonly plan: RedrivePlan;
  readonly approval: RedriveApproval;
  readonly executedBy: string;
  readonly redriveId: string;
  /** The execution's audit fields: a STARTED entry with the approval's nonce, before anything moves. */
  readonly audit?: Omit<RedriveAuditEntry, 'outcome'>;
}

/**
 * Runs a checked, approved plan (`RedriveService.execute()` without its checks and audit entries): holds the
 * source exclusively (across processes) from before reading it to the last settle, records the approval as
 * used first (an approval runs once) together with the STARTED entry, moves the planned messages and
 * counts what was redriven.
 */
export async function runExecution(context: ExecutionContext, execution: Execution): Promise<RedriveResult> {
  const { plan, approval, executedBy, redriveId, audit } = execution;
  const { ledger } = context;
  checkUniquePositions(plan);
  const messages = await ledger.withExclusiveHold(plan.transport, plan.source, async () => {
    const started = audit && {
      ...audit,
      outcome: 'STARTED',
      detail: plan.edit
        ? editDetail(plan.edit)
        : `${plan.messages.length} planned, ${plan.action === 'discard' ? 'to archive' : 'to redrive'}`,
    };
    // An edit also claims its dead letter, with the nonce: one edit of it ever runs (the other is refused).
    const [edited] = plan.messages;
    const claims = plan.edit ? [editClaimOf(plan.transport, plan.source, edited.fingerprint)] : undefined;
    const use = await ledger.claimApproval(
      {
        nonce: approval.nonce,
        planHash: plan.hash,
        approver: approval.approver,
        redriveId,
        executedBy,
        claims,
      },
      started,
    );
    if (!use.claimed && use.taken === 'claim') {
      throw new EditAlreadyClaimedError(plan.source, edited.messageId, use.usedBy);
    }
    if (!use.claimed) throw new ApprovalAlreadyUsedError(approval.approver, use.usedBy);
    return plan.messages.length === 0 ? [] : moveMessages(context, plan, redriveId);
  });
  const redriven = messages.filter((m) => m.status === 'REDRIVEN').length;
  const discard = plan.action === 'discard';
  if (redriven > 0 && !discard)
    context.metrics?.redriven.inc({ source: plan.source, target: plan.target }, redriven);
  const action = plan.action === 'discard' || plan.action === 'edit' ? plan.action : undefined;
  return {
    redriveId,
    source: plan.source,
    target: plan.target,
    ...(action ? { action } : {}),
    redriven,
    leftInSource: messages.length - redriven,
    messages,
  };
}

/**
 * Publishes each planned message's copy and settles the confirmed ones: back to the target under its real
 * key, or (a discard) into the archive as parked, pseudonymous key and failure headers kept.
 */
export async function moveMessages(
  context: ExecutionContext,
  plan: RedrivePlan,
  redriveId: string,
): Promise<MessageRedriveOutcome[]> {
  const { backend, keySecret, carryHeaders } = context;
  const route = deriveRoute(backend.kind, plan.source, context.topology);
  if (plan.action === 'discard') {
    await backend.ensureArchive(plan.source, plan.target);
    return backend.move(
      plan,
      (record) => archiveCopy(record.wire, plan.target, redriveId),
      (records) => checkDescriptions(plan, records), // the archive gets what the approver read of
    );
  }
  await backend.checkTarget(plan.source, route.target);
  const to = { target: route.target, group: route.group, carryHeaders };
  const { edit } = plan;
  if (edit) {
    // The original goes to the archive (as a discard puts it), then its edited copy to the target; the
    // original is settled only when both are confirmed.
    const archive = archiveOf(plan.source);
    await backend.ensureArchive(plan.source, archive);
    return backend.move(
      plan,
      (record) => [
        archiveCopy(record.wire, archive, redriveId),
        editedCopy(record.wire, edit, { ...to, key: restoreKey(record.wire, keySecret) }, redriveId),
      ],
      (records) => {
        checkRecords(plan.source, route, records);
        checkDescriptions(plan, records);
        checkEditRead(plan, records);
      },
    );
  }
  return backend.move(
    plan,
    (record) => redriveCopy(record.wire, { ...to, key: restoreKey(record.wire, keySecret) }, redriveId),
    (records) => {
      // What is read again, before anything moves: a dead letter of the route, as the plan described it.
      checkRecords(plan.source, route, records);
      checkDescriptions(plan, records);
    },
  );
}
