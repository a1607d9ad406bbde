import { MessageHeaders } from '../envelope/message-headers';
import { DeadLetterBackend, DeadLetterPeek } from './dead-letter-backend.interface';
import { DeadLetterRecord } from './dead-letter-record';
import { planDetail, readPlanContents } from './plan-contents';
import { cutOffOf, ReadBudget } from './read-budget';
import { buildPlan } from './redrive-planner';
import { parseRedrivePlan } from './redrive-plan.schema';
import { isPlanIntact } from './redrive-plan';

const SOURCE = 'orders.billing.dlq';
const route = { origin: 'orders', group: 'billing', target: 'orders.billing' };

/** A message of `bytes` at `index` of the DLQ. */
function record(index: number, bytes: number): DeadLetterRecord {
  return {
    position: { kind: 'queue', index },
    wire: {
      destination: SOURCE,
      key: null,
      headers: {
        [MessageHeaders.ID]: `m${index}`,
        [MessageHeaders.ORIGIN_DESTINATION]: 'orders',
        [MessageHeaders.FAILURE_CATEGORY]: 'TRANSIENT',
      },
      body: Buffer.alloc(bytes),
    },
  };
}

/** A RabbitMQ-like backend over `records`, whose `peek` holds at most `maxBytes` as the real ones do. */
function backendOver(records: DeadLetterRecord[]) {
  const peeks: Array<[number, number | undefined]> = [];
  const backend = {
    kind: 'rabbitmq' as const,
    peek: async (_source: string, limit: number, maxBytes?: number): Promise<DeadLetterPeek> => {
      peeks.push([limit, maxBytes]);
      const budget = new ReadBudget(maxBytes ?? Number.MAX_SAFE_INTEGER);
      const read: DeadLetterRecord[] = [];
      for (const r of records.slice(0, limit)) {
        if (!budget.admit(r.wire.body.length)) break;
        read.push(r);
      }
      const cutOff = cutOffOf(budget, limit, records.length, read.length);
      return { records: read, depth: records.length, ...(cutOff ? { cutOff } : {}) };
    },
    checkTarget: async () => undefined,
  } as unknown as DeadLetterBackend;
  return { backend, peeks };
}

const reading = { source: SOURCE, limit: 100, action: 'redrive' as const, now: 0 };

describe(readPlanContents.name, () => {
  it('from the head: takes only what the budget read, and says how many it left (cutOff)', async () => {
    const { backend, peeks } = backendOver(Array.from({ length: 30 }, (_, i) => record(i, 1_000)));
    const contents = await readPlanContents(backend, route, { ...reading, maxBytes: 5_000 });
    expect(peeks).toEqual([[100, 5_000]]);
    expect(contents.records.map((r) => r.wire.headers[MessageHeaders.ID])).toEqual([
      'm0',
      'm1',
      'm2',
      'm3',
      'm4',
    ]);
    expect(contents.extra.cutOff).toEqual({ reason: 'byte-budget', budgetBytes: 5_000, notRead: 25 });
  });

  it('a selection: chooses among the messages read only, an id beyond them is not found, and the cut is said', async () => {
    const { backend } = backendOver(Array.from({ length: 30 }, (_, i) => record(i, 1_000)));
    const selection = { by: 'ids' as const, messageIds: ['m1', 'm20'] };
    const contents = await readPlanContents(backend, route, { ...reading, selection, maxBytes: 5_000 });
    expect(contents.records.map((r) => r.wire.headers[MessageHeaders.ID])).toEqual(['m1']);
    expect(contents.extra.notFound).toEqual(['m20']);
    expect(contents.extra.cutOff).toEqual({ reason: 'byte-budget', budgetBytes: 5_000, notRead: 25 });
  });

  it('says nothing of a budget that did not stop the read', async () => {
    const { backend } = backendOver(Array.from({ length: 3 }, (_, i) => record(i, 1_000)));
    const contents = await readPlanContents(backend, route, { ...reading, maxBytes: 5_000 });
    expect(contents.records).toHaveLength(3);
    expect(contents.extra.cutOff).toBeUndefined();
  });
});

describe(buildPlan.name, () => {
  it('seals the cut into the plan, which reads back intact and says it in its audit detail', async () => {
    const { backend } = backendOver(Array.from({ length: 30 }, (_, i) => record(i, 1024 * 1024)));
    const plan = await buildPlan(
      { source: SOURCE, limit: 20 },
      { backend, actor: 'alice', now: 0, maxBytes: 4 * 1024 * 1024 },
    );
    expect(plan.messages).toHaveLength(4);
    expect(plan.cutOff).toEqual({ reason: 'byte-budget', budgetBytes: 4 * 1024 * 1024, notRead: 16 });
    const read = parseRedrivePlan(JSON.parse(JSON.stringify(plan)));
    expect(isPlanIntact(read)).toBe(true);
    expect(read.cutOff).toEqual(plan.cutOff);
    expect(planDetail(plan)).toBe('4 of 30 waiting; 16 more not read: byte budget of 4 MiB reached');
  });
});
