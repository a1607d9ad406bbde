import { MessageHeaders } from '../envelope/message-headers';
import { KeySecret } from '../failure/key-secret';
import { DeadLetterRecord, describeRecord } from './dead-letter-record';
import { KeyNotRestorableError } from './errors/key-not-restorable.error';
import { RedriveRefusedError } from './errors/redrive-refused.error';
import { PlanAction, PlanSelection } from './plan-selection';
import { RedriveLimits } from './redrive-limits';
import { PlannedMessage, SkippedMessage } from './redrive-plan';
import { checkRecords, RedriveRoute } from './redrive-route';
import { restoreKey } from './restore-key';

/** What a selection takes from the records read, and what it leaves. */
export interface SelectedRecords {
  /** At most 100, in the order they would be moved. */
  readonly taken: readonly DeadLetterRecord[];
  /** Selected but not redrivable: left where they are, with the reason. */
  readonly skipped: readonly SkippedMessage[];
  /** Kafka: records not taken that lie before a taken one in their partition (re-parked at execution). */
  readonly kept: readonly PlannedMessage[];
  /** A selection by ids: the ids picked that none of the records read has, in the order picked. */
  readonly notFound: readonly string[];
}

/** What `selectRecords` needs besides the records. */
export interface SelectionContext {
  readonly transport: 'kafka' | 'rabbitmq';
  readonly source: string;
  readonly route: RedriveRoute;
  readonly action: PlanAction;
  readonly keySecret?: KeySecret;
  /** When the plan is made, ms since the epoch (for an age filter). */
  readonly now: number;
  /** At most this many are taken (at most 100). */
  readonly limit: number;
}

/**
 * The records of `records` (read from the head, in the order a redrive moves them) that `selection` takes:
 * at most 100. For a redrive, a selected message that cannot go back (its origin is refused, its key cannot
 * be restored) is skipped with the reason instead of refusing the plan, so it never blocks the rest; a
 * discard takes any message.
 */
export function selectRecords(
  records: readonly DeadLetterRecord[],
  selection: PlanSelection,
  context: SelectionContext,
): SelectedRecords {
  const taken: DeadLetterRecord[] = [];
  const skipped: SkippedMessage[] = [];
  for (const record of records) {
    if (taken.length >= Math.min(context.limit, RedriveLimits.MAX_BATCH)) break;
    const message = describeRecord(record);
    if (!isSelected(selection, message, context.now)) continue;
    const refusal = context.action === 'redrive' ? whyNotRedrivable(record, context) : undefined;
    if (refusal === undefined) taken.push(record);
    else skipped.push({ message, reason: refusal });
  }
  return {
    taken,
    skipped,
    kept: context.transport === 'kafka' ? keptBefore(records, taken) : [],
    notFound: selection.by === 'ids' ? idsNotIn(records, selection.messageIds) : [],
  };
}

/** The ids of `picked` that no record has (a picked id may be gone since, deeper than read, or mistyped). */
function idsNotIn(records: readonly DeadLetterRecord[], picked: readonly string[]): string[] {
  const present = new Set(records.map((r) => r.wire.headers[MessageHeaders.ID]));
  return picked.filter((id) => !present.has(id));
}

/** Why `record` cannot go back on `context`'s route (origin refused, key not restorable); undefined when it can. */
export function whyNotRedrivable(
  record: DeadLetterRecord,
  context: Pick<SelectionContext, 'source' | 'route' | 'keySecret'>,
): string | undefined {
  try {
    checkRecords(context.source, context.route, [record]);
    restoreKey(record.wire, context.keySecret);
    return undefined;
  } catch (error) {
    if (error instanceof RedriveRefusedError || error instanceof KeyNotRestorableError) return error.message;
    throw error;
  }
}

/** Per partition, the records not taken whose offset is below the last taken one's. */
function keptBefore(
  records: readonly DeadLetterRecord[],
  taken: readonly DeadLetterRecord[],
): PlannedMessage[] {
  const last = new Map<number, bigint>();
  for (const { position } of taken) {
    if (position.kind !== 'partition') continue;
    const offset = BigInt(position.offset);
    if ((last.get(position.partition) ?? -1n) < offset) last.set(position.partition, offset);
  }
  const chosen = new Set(taken);
  return records
    .filter((r) => {
      if (chosen.has(r) || r.position.kind !== 'partition') return false;
      const until = last.get(r.position.partition);
      return until !== undefined && BigInt(r.position.offset) < until;
    })
    .map(describeRecord);
}

/** True when `selection` takes `message`, judged at `now` (ms since the epoch). */
export function isSelected(selection: PlanSelection, message: PlannedMessage, now: number): boolean {
  if (selection.by === 'ids') {
    return message.messageId !== null && selection.messageIds.includes(message.messageId);
  }
  if (selection.category !== undefined && message.failureCategory !== selection.category) return false;
  if (selection.code !== undefined && message.failureCode !== selection.code) return false;
  if (selection.type !== undefined && message.type !== selection.type) return false;
  if (selection.olderThanMinutes !== undefined) {
    const at = Date.parse(message.lastFailureAt ?? '');
    if (!Number.isFinite(at) || now - at < selection.olderThanMinutes * 60_000) return false;
  }
  return true;
}
