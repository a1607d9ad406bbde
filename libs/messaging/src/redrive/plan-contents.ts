import { KeySecret } from '../failure/key-secret';
import { DeadLetterBackend } from './dead-letter-backend.interface';
import { DeadLetterRecord } from './dead-letter-record';
import { describeSelection, PlanAction, PlanSelection } from './plan-selection';
import { selectRecords } from './plan-selection-records';
import { ReadCutOff } from './read-budget';
import { RedriveLimits } from './redrive-limits';
import { RedrivePlan } from './redrive-plan';
import { checkRecords, RedriveRoute } from './redrive-route';
import { restoreKey } from './restore-key';
import { PlanEdit } from './edit/message-edit';

/** What a plan is asked to read. */
export interface PlanReading {
  readonly source: string;
  /** At most this many messages are taken. */
  readonly limit: number;
  /** Absent: the first `limit` from the head. */
  readonly selection?: PlanSelection;
  readonly action: PlanAction;
  readonly keySecret?: KeySecret;
  /** ms since the epoch, for an age filter. */
  readonly now: number;
  /** Bytes the read may hold (`RedriveLimits.READ_BUDGET_BYTES` when absent). */
  readonly maxBytes?: number;
}

/** The messages a plan takes, the depth of the source, and the plan's selection fields. */
export interface PlanContents {
  readonly records: readonly DeadLetterRecord[];
  readonly depth: number;
  readonly extra: Pick<RedrivePlan, 'action' | 'selection' | 'skipped' | 'kept' | 'notFound' | 'cutOff'>;
}

/**
 * Reads what a plan takes, settling nothing. From the head (no selection): the first `limit`, refusing the
 * whole plan when one of them cannot be redriven (as before selections existed). A selection reads up to
 * `RedriveLimits.MAX_SCAN` messages and takes the matching ones; one that cannot be redriven is skipped
 * with its reason, never blocking the rest. A discard takes any dead letter. Either read stops at the byte
 * budget: the plan then covers only what was read and says how many it left (`cutOff`), never more.
 */
export async function readPlanContents(
  backend: DeadLetterBackend,
  route: RedriveRoute,
  reading: PlanReading,
): Promise<PlanContents> {
  const { source, action, selection } = reading;
  const discard = action === 'discard' ? { action } : {};
  if (!selection) {
    const { records, depth, cutOff } = await backend.peek(source, reading.limit, reading.maxBytes);
    if (action === 'redrive') {
      checkRecords(source, route, records);
      if (records.length > 0) await backend.checkTarget(source, route.target);
      records.forEach((record) => restoreKey(record.wire, reading.keySecret));
    }
    return { records, depth, extra: { ...discard, ...(cutOff ? { cutOff } : {}) } };
  }
  const {
    records: scanned,
    depth,
    cutOff,
  } = await backend.peek(source, RedriveLimits.MAX_SCAN, reading.maxBytes);
  const { taken, skipped, kept, notFound } = selectRecords(scanned, selection, {
    transport: backend.kind,
    source,
    route,
    action,
    keySecret: reading.keySecret,
    now: reading.now,
    limit: reading.limit,
  });
  if (action === 'redrive' && taken.length > 0) await backend.checkTarget(source, route.target);
  return {
    records: taken,
    depth,
    extra: {
      ...discard,
      selection,
      ...(skipped.length > 0 ? { skipped } : {}),
      ...(kept.length > 0 ? { kept } : {}),
      ...(notFound.length > 0 ? { notFound } : {}),
      ...(cutOff ? { cutOff } : {}),
    },
  };
}

/** The audit log's detail of a PLAN entry: counts, the selection, skipped, kept and ids not found. */
export function planDetail(plan: RedrivePlan): string {
  if (plan.edit) return editDetail(plan.edit);
  const counts = `${plan.bulk?.taken ?? plan.messages.length} of ${plan.depth} waiting`;
  const parts = [plan.action === 'discard' ? `discard: ${counts}` : counts];
  if (plan.selection) parts.push(`selected by ${describeSelection(plan.selection)}`);
  if (plan.skipped?.length)
    parts.push(`${plan.bulk?.skipped ?? plan.skipped.length} skipped (cannot be redriven)`);
  if (plan.kept?.length || plan.bulk?.kept)
    parts.push(`${plan.bulk?.kept ?? plan.kept?.length} re-parked at the end`);
  if (plan.notFound?.length)
    parts.push(`${plan.notFound.length} id(s) not found: ${plan.notFound.join(', ')}`);
  if (plan.cutOff) parts.push(cutOffText(plan.cutOff));
  if (plan.bulk) parts.push(`plan at scale ${plan.bulk.store}, digest ${plan.bulk.digest}`);
  return parts.join('; ');
}

/** A cut-off read in words: `12 more not read: byte budget of 16 MiB reached` (or `not shown`). */
export function cutOffText(cutOff: ReadCutOff, verb: 'read' | 'shown' = 'read'): string {
  const mib = cutOff.budgetBytes / (1024 * 1024);
  const budget = Number.isInteger(mib) ? `${mib} MiB` : `${cutOff.budgetBytes} bytes`;
  return `${cutOff.notRead} more not ${verb}: byte budget of ${budget} reached`;
}

/**
 * The audit log's detail of an edit: the message, how many changes, how it was validated and the diff's
 * hash (never the payload: the audit log is read by more people than the DLQ).
 */
export function editDetail(edit: PlanEdit): string {
  const validated =
    edit.validated === 'schema' ? 'validated by its schema' : 'NOT validated (no schema known)';
  return `edit of ${edit.messageId}: ${edit.diff.length} change(s), ${validated}, diff ${edit.diffHash}`;
}
