import { DeadLetterBackend } from '../dead-letter-backend.interface';
import { DeadLetterRecord } from '../dead-letter-record';
import { isPlanIntact } from '../redrive-plan';
import { StoredBulkItem } from './bulk-chunks';
import { BulkPlanStore } from './bulk-plan-store';
import { buildBulkPlan, summarize } from './bulk-planner';
import { bulkDigest } from './bulk-selection';

const SOURCE = 'orders.billing.dlq';

function record(index: number, code: string): DeadLetterRecord {
  return {
    position: { kind: 'queue', index },
    wire: {
      destination: SOURCE,
      key: null,
      headers: { 'msg.id': `m-${index}`, 'msg.type': 'OrderPlaced', 'msg.failure-code': code },
      body: Buffer.from(`{"n":${index}}`),
    },
  };
}

/** A plan store in memory, paged as the PostgreSQL one is. */
function memoryStore(): BulkPlanStore & { items: StoredBulkItem[]; sealed?: string; appends: number[] } {
  const store = {
    items: [] as StoredBulkItem[],
    appends: [] as number[],
    sealed: undefined as string | undefined,
    create: async () => undefined,
    append: async (_id: string, items: readonly { seq: number }[]) => {
      store.appends.push(items.length);
      store.items.push(...items.map((i) => ({ ...(i as StoredBulkItem), status: 'PENDING' as const })));
    },
    trimKept: async () => undefined,
    seal: async (_id: string, hash: string) => void (store.sealed = hash),
    page: async (_id: string, after: number, limit: number) =>
      store.items.filter((i) => i.seq > after).slice(0, limit),
    run: async () => undefined,
    start: async () => true,
    mark: async () => undefined,
    finish: async () => undefined,
    counts: async () => ({ done: 0, taken: 0, inFlight: 0 }),
    close: async () => undefined,
  };
  return store;
}

/** A RabbitMQ-like backend whose scan visits `count` records, every third with code `BROKEN`. */
function backend(count: number): DeadLetterBackend & { visited: number } {
  const fake = {
    kind: 'rabbitmq' as const,
    visited: 0,
    scan: async (_source: string, visit: (r: DeadLetterRecord) => Promise<boolean> | boolean) => {
      for (let i = 0; i < count; i++) {
        fake.visited++;
        if (!(await visit(record(i, i % 3 === 0 ? 'BROKEN' : 'OTHER')))) break;
      }
      return { depth: count };
    },
    checkTarget: async () => undefined,
  };
  return fake as unknown as DeadLetterBackend & { visited: number };
}

const context = (b: DeadLetterBackend) => ({
  backend: b,
  actor: 'alice',
  now: Date.parse('2026-12-07T00:00:00Z'),
});

describe('buildBulkPlan', () => {
  it('takes a whole filter from a long scan, writes it in batches and signs the digest of what it wrote', async () => {
    const store = memoryStore();
    const plan = await buildBulkPlan(
      { source: SOURCE, selection: { by: 'filter', code: 'BROKEN' }, action: 'discard' },
      context(backend(30_000)),
      store,
      '01a24f11-f904-70db-a73f-8cdd0a055b0f',
    );
    expect(plan.messages).toEqual([]);
    expect(plan.bulk).toMatchObject({ taken: 10_000, kept: 0, skipped: 0, byCode: { BROKEN: 10_000 } });
    expect(plan.bulk?.digest).toBe(bulkDigest(store.items));
    expect(Math.max(...store.appends)).toBeLessThanOrEqual(500); // written a batch at a time
    expect(store.sealed).toBe(plan.hash);
    expect(isPlanIntact(plan)).toBe(true);
    expect(await summarize(store, plan.bulk!.store)).toMatchObject({
      taken: 10_000,
      digest: plan.bulk!.digest,
    });
  });

  it('looks thousands of picked ids up in a set and names the ones no message had', async () => {
    const store = memoryStore();
    const picked = [...Array.from({ length: 5_000 }, (_, i) => `m-${i * 2}`), 'gone-1', 'gone-2'];
    const plan = await buildBulkPlan(
      { source: SOURCE, selection: { by: 'ids', messageIds: picked }, action: 'discard' },
      context(backend(20_000)),
      store,
      '01a24f11-f904-70db-a73f-8cdd0a055b0e',
    );
    expect(plan.bulk?.taken).toBe(5_000);
    expect(plan.notFound).toEqual(['gone-1', 'gone-2']);
    expect(store.items[1].message.messageId).toBe('m-2');
  });
});
