import { KafkaMessage } from 'kafkajs';
import { ReadBudget } from '../read-budget';
import { firstByTime } from './first-by-time';
import { HEAD_SLACK, HeadRangeReader, readHead } from './kafka-head-reader';
import { RangeRead } from './kafka-range-reader';
import { PartitionRange } from './partition-ranges';

/** A record at `offset` written at `at`, with a body of `bytes`. */
const message = (offset: number, at: number, bytes = 10): KafkaMessage => ({
  offset: String(offset),
  timestamp: String(at),
  key: null,
  value: Buffer.alloc(bytes),
  headers: { 'msg.id': `m-${at}-${offset}` },
  attributes: 0,
});

/** A topic whose partitions hold `logs` (by offset from 0), read through a fake `readRangesWithin`. */
function topic(logs: KafkaMessage[][]) {
  const reads: PartitionRange[][] = [];
  const read: HeadRangeReader = async (ranges, budgetOf) => {
    reads.push([...ranges]);
    const got = new Map<number, RangeRead>();
    for (const range of ranges) {
      const budget = budgetOf(range.partition);
      const messages: KafkaMessage[] = [];
      let cut = false;
      let nextAt: number | undefined;
      for (const m of logs[range.partition]) {
        const offset = BigInt(m.offset);
        if (offset < range.from || offset >= range.to) continue;
        if (!budget.admit(m)) {
          cut = true;
          nextAt = Number(m.timestamp);
          break;
        }
        messages.push(m);
      }
      got.set(range.partition, { messages, cut, ...(cut ? { nextAt } : {}) });
    }
    return got;
  };
  const ranges = logs.map((log, partition) => ({ partition, from: 0n, to: BigInt(log.length) }));
  const wholeMerge = (limit: number) =>
    firstByTime(logs, limit, (m) => Number(m.timestamp)).map((m) => m.headers?.['msg.id']);
  const readCount = () => reads.flat().reduce((sum, r) => sum + Number(r.to - r.from), 0);
  return { read, ranges, reads, wholeMerge, readCount };
}

const ids = (records: { wire: { headers: Record<string, string> } }[]) =>
  records.map((r) => r.wire.headers['msg.id']);

/** A small deterministic random source (a linear congruential generator). */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe(readHead.name, () => {
  const budget = () => new ReadBudget(1024 * 1024 * 1024);

  it('reads ceil(limit / partitions) + slack per partition, not limit, when the topic is even', async () => {
    const logs = Array.from({ length: 12 }, (_, p) =>
      Array.from({ length: 500 }, (_, o) => message(o, o * 12 + p)),
    );
    const t = topic(logs);
    const records = await readHead('dlq', t.ranges, 100, budget(), t.read);
    expect(ids(records)).toEqual(t.wholeMerge(100));
    expect(t.reads).toHaveLength(1);
    expect(t.reads[0].every((r) => r.to - r.from === BigInt(Math.ceil(100 / 12) + HEAD_SLACK))).toBe(true);
    expect(t.readCount()).toBeLessThanOrEqual(100 + 12 * (Math.ceil(100 / 12) + HEAD_SLACK));
  });

  it('reads further only the partition the merge ran out of, so a skewed topic keeps the order', async () => {
    const logs = Array.from({ length: 12 }, (): KafkaMessage[] => []);
    logs[3] = Array.from({ length: 5_000 }, (_, o) => message(o, o));
    logs[7] = [message(0, 10_000)];
    const t = topic(logs);
    const records = await readHead('dlq', t.ranges, 100, budget(), t.read);
    expect(ids(records)).toEqual(t.wholeMerge(100));
    expect(t.reads.slice(1).every((round) => round.every((r) => r.partition === 3))).toBe(true);
    expect(t.readCount()).toBeLessThan(100 + 2 * (Math.ceil(100 / 12) + HEAD_SLACK));
  });

  it('takes exactly the first records of the merge of the whole partitions (random topics)', async () => {
    const next = random(45);
    for (let run = 0; run < 50; run++) {
      const partitions = 1 + Math.floor(next() * 16);
      const logs = Array.from({ length: partitions }, () => {
        let at = 0;
        const length = Math.floor(next() ** 3 * 400);
        return Array.from({ length }, (_, o) => message(o, (at += Math.floor(next() * 50))));
      });
      const limit = 1 + Math.floor(next() * 300);
      const t = topic(logs);
      expect(ids(await readHead('dlq', t.ranges, limit, budget(), t.read))).toEqual(t.wholeMerge(limit));
    }
  });

  it('stops at the byte budget with a prefix of that order, the budget shared among the partitions', async () => {
    const logs = Array.from({ length: 4 }, (_, p) =>
      Array.from({ length: 50 }, (_, o) => message(o, o * 4 + p, 1_000)),
    );
    const t = topic(logs);
    const within = new ReadBudget(20_000);
    const records = await readHead('dlq', t.ranges, 100, within, t.read);
    expect(within.exhausted).toBe(true);
    expect(within.usedBytes).toBeLessThanOrEqual(20_000);
    expect(records.length).toBeGreaterThan(10);
    expect(records.length).toBeLessThanOrEqual(20);
    expect(ids(records)).toEqual(t.wholeMerge(records.length));
  });

  it('takes what is older than a record the budget refused in another partition (budget below one record each)', async () => {
    const logs = Array.from({ length: 3 }, (_, p) =>
      Array.from({ length: 8 }, (_, o) => message(o, o * 3 + p, 800)),
    );
    const t = topic(logs);
    const records = await readHead('dlq', t.ranges, 100, new ReadBudget(2_000), t.read);
    expect(ids(records)).toEqual(t.wholeMerge(2));
  });
});
