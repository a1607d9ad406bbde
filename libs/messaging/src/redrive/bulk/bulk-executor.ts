import { RedriveRefusedError } from '../errors/redrive-refused.error';
import { ApprovalAlreadyUsedError } from '../errors/approval-already-used.error';
import { RedrivePlanAlteredError } from '../errors/redrive-plan-altered.error';
import { RedrivePlanStaleError } from '../errors/redrive-plan-stale.error';
import { fingerprintOf } from '../dead-letter-record';
import { MessageHeaders } from '../../envelope/message-headers';
import { RedriveAuditEntry } from '../ledger/redrive-ledger.interface';
import { Execution, ExecutionContext, moveMessages } from '../redrive-executor';
import { RedrivePlan } from '../redrive-plan';
import { BulkChunk, bulkChunks, StoredBulkItem } from './bulk-chunks';
import { BulkPlanStore } from './bulk-plan-store';
import { summarize } from './bulk-planner';
import { BulkSelection } from './bulk-selection';

/** How far an execution at scale is, after each chunk. */
export interface BulkProgress {
  /** The redrive's id (the same across resumed runs). */
  readonly redriveId: string;
  /** Messages moved so far, earlier runs included. */
  readonly done: number;
  /** Messages the plan moves. */
  readonly total: number;
  /** Chunks this run executed. */
  readonly chunks: number;
}

/** What `executeBulk()` reports and lets a test inject. */
export interface BulkExecutionOptions {
  /** Called after each chunk is recorded in the plan store (progress output: CLI, console). */
  readonly onProgress?: (progress: BulkProgress) => void;
  /**
   * Fault injection for tests: called after a chunk moved on the broker and before the plan store records
   * it. Throwing there stops the run as a crash in that window would; the next run resumes.
   */
  readonly afterMove?: (chunk: number) => void | Promise<void>;
}

/** The outcome of `executeBulk()`. */
export interface BulkRedriveResult {
  /** The id written to every copy's `msg.redrive-id`: the same for every run of the plan. */
  readonly redriveId: string;
  /** The dead-letter destination read (the plan's `source`). */
  readonly source: string;
  /** Where the messages were published (the plan's `target`). */
  readonly target: string;
  /** `discard` when the plan archives its messages in `target`. */
  readonly action?: 'discard';
  /** Messages moved, earlier runs of the same plan included. */
  readonly redriven: number;
  /** Messages of the plan still in the source. */
  readonly leftInSource: number;
  /** Messages this run moved. */
  readonly movedNow: number;
  /** True when this run continued an execution that stopped before its end. */
  readonly resumed: boolean;
  /** Why the run stopped before the end (a copy not confirmed or settled); undefined when it finished. */
  readonly stoppedBy?: string;
}

/** What an execution at scale adds to an execution's context. */
export interface BulkExecutionContext extends ExecutionContext {
  readonly store: BulkPlanStore;
}

/**
 * Runs a checked, approved plan at scale, holding the source exclusively: checks the plan store holds the
 * items the plan signs (sealed under its hash, same digest, re-derived a page at a time), claims the
 * approval with a STARTED entry (or, resuming with the approval the stopped run claimed, records RESUMED),
 * settles what a crash left in flight against the source, then moves the pending items a chunk at a time
 * with the same checks and copies as `execute()` (`moveMessages`), recording each chunk in the plan store and
 * the audit log (the chunk's moved ids). Stops at the first chunk with a message not moved.
 */
export async function runBulkExecution(
  context: BulkExecutionContext,
  execution: Execution,
  options: BulkExecutionOptions = {},
): Promise<BulkRedriveResult> {
  const { plan, approval, executedBy, audit } = execution;
  const { ledger, store } = context;
  const bulk = plan.bulk;
  if (!bulk) throw new RedrivePlanStaleError(plan.source, 'the plan lists its messages');
  return ledger.withExclusiveHold(plan.transport, plan.source, async () => {
    const run = await store.run(bulk.store);
    if (run?.planHash !== plan.hash) {
      throw new RedrivePlanAlteredError(plan.source, [
        `the plan store holds no items sealed for this plan (${bulk.store})`,
      ]);
    }
    await checkStoredItems(plan, bulk, store);
    if (run.finished)
      throw new RedrivePlanStaleError(plan.source, 'the plan at scale was executed to its end');
    const redriveId = run.redriveId ?? execution.redriveId;
    const resumed = run.redriveId !== undefined;
    const counts = await store.counts(bulk.store);
    const base = audit && { ...audit, redriveId };
    const use = {
      nonce: approval.nonce,
      planHash: plan.hash,
      approver: approval.approver,
      redriveId,
      executedBy,
    };
    if (run.nonce === approval.nonce) {
      // The approval the stopped run claimed (the plan store names it): this run continues that one.
      await ledger.claimApproval(use, base && { ...base, outcome: 'STARTED', detail: startedDetail(bulk) });
      if (base)
        await ledger.record({
          ...base,
          outcome: 'RESUMED',
          detail: `${counts.done} of ${counts.taken} moved before`,
        });
    } else {
      const started = base && {
        ...base,
        outcome: resumed ? 'RESUMED' : 'STARTED',
        detail: resumed ? `${counts.done} of ${counts.taken} moved before` : startedDetail(bulk),
      };
      const claim = await ledger.claimApproval(use, started);
      if (!claim.claimed) throw new ApprovalAlreadyUsedError(approval.approver, claim.usedBy);
    }
    if (!(await store.start(bulk.store, { redriveId, nonce: approval.nonce, executedBy }))) {
      throw new RedrivePlanStaleError(
        plan.source,
        'another execution of this plan runs under another redrive id',
      );
    }
    if (counts.inFlight > 0) await settleInFlight(context, plan, bulk.store, base);
    const moved = await moveChunks(context, plan, bulk, { redriveId, options, base });
    const after = await store.counts(bulk.store);
    if (after.done === after.taken) await store.finish(bulk.store);
    return {
      redriveId,
      source: plan.source,
      target: plan.target,
      ...(plan.action === 'discard' ? { action: 'discard' as const } : {}),
      redriven: after.done,
      leftInSource: after.taken - after.done,
      movedNow: moved.movedNow,
      resumed,
      ...(moved.stoppedBy ? { stoppedBy: moved.stoppedBy } : {}),
    };
  });
}

function startedDetail(bulk: BulkSelection): string {
  return `plan at scale: ${bulk.taken} planned${bulk.kept > 0 ? `, ${bulk.kept} to re-park` : ''}`;
}

/** Refuses unless the stored items give the plan's digest and counts (read a page at a time). */
async function checkStoredItems(plan: RedrivePlan, bulk: BulkSelection, store: BulkPlanStore): Promise<void> {
  const stored = await summarize(store, bulk.store);
  const differences: string[] = [];
  if (stored.digest !== bulk.digest)
    differences.push(`the stored items' digest is ${stored.digest}, the plan signs ${bulk.digest}`);
  if (stored.taken !== bulk.taken || stored.kept !== bulk.kept) {
    differences.push(
      `the store holds ${stored.taken} + ${stored.kept} items, the plan ${bulk.taken} + ${bulk.kept}`,
    );
  }
  if (differences.length > 0) throw new RedrivePlanAlteredError(plan.source, differences);
}

/** Moves the pending items chunk by chunk; resolves with how many moved and why it stopped early, if it did. */
async function moveChunks(
  context: BulkExecutionContext,
  plan: RedrivePlan,
  bulk: BulkSelection,
  run: {
    readonly redriveId: string;
    readonly options: BulkExecutionOptions;
    /** The execution's audit fields: each chunk's PROGRESS entry. */
    readonly base?: Omit<RedriveAuditEntry, 'outcome'>;
  },
): Promise<{ movedNow: number; stoppedBy?: string }> {
  const { store } = context;
  const { redriveId, options, base } = run;
  const chunks = bulkChunks(plan.transport, (after, limit) => store.page(bulk.store, after, limit));
  let movedNow = 0;
  let number = 0;
  let done = (await store.counts(bulk.store)).done;
  for (let step = await chunks.next(); !step.done;) {
    const chunk = step.value;
    number++;
    await store.mark(
      bulk.store,
      chunk.items.map((i) => i.seq),
      'IN_FLIGHT',
    );
    const outcomes = await moveChunk(context, plan, chunk, redriveId);
    await options.afterMove?.(number);
    const moved = chunk.messages.filter((_, i) => outcomes[i].status === 'REDRIVEN');
    const takes = chunk.items.filter((i) => i.role === 'take');
    const movedSeqs = takes.filter((_, i) => outcomes[i].status === 'REDRIVEN').map((i) => i.seq);
    const failed = outcomes.find((o) => o.status !== 'REDRIVEN');
    await store.mark(bulk.store, movedSeqs, 'DONE');
    await store.mark(
      bulk.store,
      takes.filter((_, i) => outcomes[i].status !== 'REDRIVEN').map((i) => i.seq),
      'PENDING',
    );
    const kept = chunk.items.filter((i) => i.role === 'keep');
    if (!failed)
      await store.mark(
        bulk.store,
        kept.map((i) => i.seq),
        'DONE',
      );
    else if (kept.length > 0) await settleInFlight(context, plan, bulk.store, base); // which kept ones went
    movedNow += moved.length;
    done += moved.length;
    if (base && moved.length > 0) {
      await context.ledger.record({
        ...base,
        outcome: 'PROGRESS',
        messageIds: moved.map((m) => m.messageId),
        detail: `chunk ${number}: ${moved.length} moved, ${done} of ${bulk.taken} in all`,
      });
    }
    options.onProgress?.({ redriveId, done, total: bulk.taken, chunks: number });
    if (failed) {
      await chunks.return();
      return {
        movedNow,
        stoppedBy: `${failed.status} at ${JSON.stringify(failed.position)}: ${failed.error ?? ''}`,
      };
    }
    step = await chunks.next(moved.length);
  }
  return { movedNow };
}

/** One chunk through `moveMessages`, as a plan of its own; a refusal before anything moved leaves it pending. */
async function moveChunk(
  context: BulkExecutionContext,
  plan: RedrivePlan,
  chunk: BulkChunk,
  redriveId: string,
) {
  const { bulk: _bulk, skipped: _skipped, ...rest } = plan;
  const part: RedrivePlan = { ...rest, messages: chunk.messages, kept: chunk.kept };
  try {
    return await moveMessages(context, part, redriveId);
  } catch (error) {
    // The brokers' checks (stale, altered, refused route) run before the first publish: nothing moved.
    if (error instanceof RedriveRefusedError) {
      await context.store.mark(
        plan.bulk?.store ?? '',
        chunk.items.map((i) => i.seq),
        'PENDING',
      );
    }
    throw error;
  }
}

/**
 * What a run that stopped while items were in flight (a crash) left: each in-flight item still in the source
 * goes back to PENDING (a copy of it may have reached the target: moving it again gives a duplicate the
 * inbox absorbs, by its `msg.id`), each one gone from it is DONE (its copy was confirmed before it was
 * settled). RabbitMQ: one scan from the head; Kafka: per partition, the first in-flight offset still pending.
 */
async function settleInFlight(
  context: BulkExecutionContext,
  plan: RedrivePlan,
  storeId: string,
  base: Omit<RedriveAuditEntry, 'outcome'> | undefined,
): Promise<void> {
  const inFlight: StoredBulkItem[] = [];
  for (let after = -1; ;) {
    const page = await context.store.page(storeId, after, 500);
    inFlight.push(...page.filter((i) => i.status === 'IN_FLIGHT'));
    if (page.length < 500) break;
    after = page[page.length - 1].seq;
  }
  if (inFlight.length === 0) return;
  const present = new Set<number>();
  if (plan.transport === 'rabbitmq') {
    const wanted = new Map(inFlight.map((i) => [`${i.message.messageId}/${i.message.fingerprint}`, i.seq]));
    const deepest = Math.max(
      ...inFlight.map((i) => (i.message.position.kind === 'queue' ? i.message.position.index : 0)),
    );
    let index = 0;
    await context.backend.scan(plan.source, (record) => {
      const seq = wanted.get(
        `${record.wire.headers[MessageHeaders.ID] ?? null}/${fingerprintOf(record.wire)}`,
      );
      if (seq !== undefined) present.add(seq);
      return ++index <= deepest && present.size < wanted.size; // indexes only move towards the head
    });
  } else {
    const byPartition = new Map<number, StoredBulkItem[]>();
    for (const item of inFlight) {
      const p = item.message.position.kind === 'partition' ? item.message.position.partition : -1;
      byPartition.set(p, [...(byPartition.get(p) ?? []), item]);
    }
    for (const items of byPartition.values()) {
      // Committed offsets only grow: the items still pending are a suffix; find where it starts.
      let low = 0;
      let high = items.length;
      while (low < high) {
        const mid = (low + high) >> 1;
        const found = await context.backend.peekAt(plan.source, items[mid].message.position);
        if (found) high = mid;
        else low = mid + 1;
      }
      items.slice(low).forEach((i) => present.add(i.seq));
    }
  }
  await context.store.mark(
    storeId,
    inFlight.filter((i) => present.has(i.seq)).map((i) => i.seq),
    'PENDING',
  );
  const gone = inFlight.filter((i) => !present.has(i.seq));
  await context.store.mark(
    storeId,
    gone.map((i) => i.seq),
    'DONE',
  );
  // What the stopped run moved without recording it: named in the audit log now, as a chunk's are.
  const goneTaken = gone.filter((i) => i.role === 'take');
  if (base && goneTaken.length > 0) {
    await context.ledger.record({
      ...base,
      outcome: 'PROGRESS',
      messageIds: goneTaken.map((i) => i.message.messageId),
      detail: `${goneTaken.length} moved by the run that stopped, found settled when resuming`,
    });
  }
}
