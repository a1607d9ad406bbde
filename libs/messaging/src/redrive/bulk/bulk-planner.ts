import { archiveOf } from '../dead-letter-archive';
import { describeRecord } from '../dead-letter-record';
import { PlanSelection } from '../plan-selection';
import { isSelected, whyNotRedrivable } from '../plan-selection-records';
import { PlannedMessage, RedrivePlan, sealPlan, SkippedMessage } from '../redrive-plan';
import { PlanningContext, requestedRoute } from '../redrive-planner';
import { RedrivePlanRequest } from '../redrive-service-options';
import { BULK_PAGE } from './bulk-chunks';
import { BulkPlanStore } from './bulk-plan-store';
import { BulkDigest, BulkItem } from './bulk-selection';

/** What a plan at scale is asked for: a selection (a group is a filter on category and code) and no limit. */
export interface BulkPlanRequest extends Omit<RedrivePlanRequest, 'limit' | 'selection'> {
  /** Which messages: by id or by a filter; every one of them the scan finds is taken. */
  readonly selection: PlanSelection;
}

/** Items written to the store at a time while scanning. */
const WRITE_BATCH = 500;
/** Skipped messages a plan lists (all are counted). */
export const SKIPPED_SHOWN = 100;

/**
 * A dry run at scale (`RedriveService.planBulk()` without its audit entry): derives the route like `plan()`,
 * scans the whole source a message at a time (settling nothing), writes each message the selection takes
 * (Kafka: and each one it passes over, re-parked) to the plan store in order, and seals a plan that lists
 * none of them but carries their counts and digest. Memory: one write batch and one page, not the selection.
 */
export async function buildBulkPlan(
  request: BulkPlanRequest,
  context: PlanningContext,
  store: BulkPlanStore,
  storeId: string,
): Promise<RedrivePlan> {
  const { backend } = context;
  const route = requestedRoute(request, backend.kind, context.topology);
  const action = request.action ?? 'redrive';
  await store.create(storeId, backend.kind, request.source);
  const skipped: SkippedMessage[] = [];
  let skippedCount = 0;
  let batch: BulkItem[] = [];
  let seq = 0;
  const flush = async () => {
    await store.append(storeId, batch);
    batch = [];
  };
  const selected = selector(request.selection, context.now);
  const { depth } = await backend.scan(request.source, async (record) => {
    const message = describeRecord(record);
    let role: BulkItem['role'] | undefined;
    if (selected(message)) {
      const refusal =
        action === 'redrive'
          ? whyNotRedrivable(record, { source: request.source, route, keySecret: context.keySecret })
          : undefined;
      if (refusal === undefined) role = 'take';
      else {
        skippedCount++;
        if (skipped.length < SKIPPED_SHOWN) skipped.push({ message, reason: refusal });
      }
    }
    // Kafka passes a topic in order: what is not taken before a taken one is re-parked (trimmed after).
    if (role === undefined && backend.kind === 'kafka') role = 'keep';
    if (role !== undefined) batch.push({ seq: seq++, role, message });
    if (batch.length >= WRITE_BATCH) await flush();
    return true;
  });
  await flush();
  if (backend.kind === 'kafka') await store.trimKept(storeId);
  const summary = await summarize(store, storeId);
  if (action === 'redrive' && summary.taken > 0) await backend.checkTarget(request.source, route.target);
  const discard = action === 'discard';
  const plan = sealPlan({
    version: 2,
    transport: backend.kind,
    plannedBy: context.actor,
    source: request.source,
    target: discard ? archiveOf(request.source) : route.target,
    group: route.group,
    createdAt: new Date(context.now).toISOString(),
    depth,
    messages: [],
    ...(discard ? { action } : {}),
    selection: request.selection,
    ...(skipped.length > 0 ? { skipped } : {}),
    ...(selected.notFound().length > 0 ? { notFound: selected.notFound() } : {}),
    bulk: { store: storeId, ...summary, skipped: skippedCount },
  });
  await store.seal(storeId, plan.hash);
  return plan;
}

/**
 * `isSelected` for a scan of any length: a selection by ids looks each message up in a set (thousands of
 * ids over 100,000 messages), and says which ids no message had (`notFound`).
 */
function selector(
  selection: PlanSelection,
  now: number,
): ((message: PlannedMessage) => boolean) & { notFound(): string[] } {
  if (selection.by !== 'ids')
    return Object.assign((m: PlannedMessage) => isSelected(selection, m, now), { notFound: () => [] });
  const picked = new Set(selection.messageIds);
  const found = new Set<string>();
  const test = (message: PlannedMessage) => {
    if (message.messageId === null || !picked.has(message.messageId)) return false;
    found.add(message.messageId);
    return true;
  };
  return Object.assign(test, { notFound: () => selection.messageIds.filter((id) => !found.has(id)) });
}

/** The counts, failure codes and digest of a plan's stored items, read a page at a time. */
export async function summarize(
  store: Pick<BulkPlanStore, 'page'>,
  storeId: string,
): Promise<{ taken: number; kept: number; digest: string; byCode: Record<string, number> }> {
  const digest = new BulkDigest();
  const byCode: Record<string, number> = {};
  let taken = 0;
  let kept = 0;
  for (let after = -1; ;) {
    const page = await store.page(storeId, after, BULK_PAGE);
    digest.add(page);
    for (const item of page) {
      if (item.role === 'keep') kept++;
      else {
        taken++;
        const code = item.message.failureCode ?? '(none)';
        byCode[code] = (byCode[code] ?? 0) + 1;
      }
    }
    if (page.length < BULK_PAGE) break;
    after = page[page.length - 1].seq;
  }
  return { taken, kept, digest: digest.digest(), byCode };
}
