import { KafkaMessage } from 'kafkajs';
import { CancelTimer, Clock, systemClock } from '../../common/clock';
import { FetchedPartition, fetchedBatch, RedriveCluster } from './kafkajs-cluster.patch';
import { PartitionRange } from './partition-ranges';

/** Bytes one fetch of one partition asks for (the broker returns at least one whole batch anyway). */
const FETCH_BYTES = 4 * 1024 * 1024;
/** The least a fetch asks for when a read budget is nearly used up. */
const MIN_FETCH_BYTES = 64 * 1024;

/** What was read of one range: its records by offset, and whether a read budget stopped it short. */
export interface RangeRead {
  readonly messages: KafkaMessage[];
  /** True when the budget refused a record of the range: the records after it were not read. */
  readonly cut: boolean;
  /** The refused record's timestamp (ms), when `cut`: the time of the range's first record not kept. */
  readonly nextAt?: number;
}

/**
 * Reads offset ranges of a topic without a consumer group: fetches each partition from its leader, from the
 * range's start, until the fetch position passes the range's end or the partition holds nothing more (a
 * control record, a compacted gap or the end of the log): it never waits for an offset that cannot come.
 * Commits nothing. Resolves with each partition's records, by offset; fails after `timeoutMs` (on `clock`).
 */
export async function readRanges(
  cluster: RedriveCluster,
  topic: string,
  ranges: readonly PartitionRange[],
  timeoutMs: number,
  clock: Pick<Clock, 'setTimeout'> = systemClock,
): Promise<Map<number, KafkaMessage[]>> {
  const read = await readRangesWithin(cluster, topic, ranges, timeoutMs, undefined, clock);
  return new Map([...read].map(([partition, r]) => [partition, r.messages]));
}

/**
 * `readRanges`, keeping only the records each partition's budget (`budgetOf`) admits: a partition stops at
 * the first record refused, and no fetch asks for more than its budget has left.
 */
export async function readRangesWithin(
  cluster: RedriveCluster,
  topic: string,
  ranges: readonly PartitionRange[],
  timeoutMs: number,
  budgetOf: ((partition: number) => RecordBudget) | undefined,
  clock: Pick<Clock, 'setTimeout'> = systemClock,
): Promise<Map<number, RangeRead>> {
  const wanted = ranges.filter((r) => r.to > r.from);
  if (wanted.length === 0) return new Map();
  let cancel: CancelTimer | undefined;
  const timeout = new Promise<never>((_, reject) => {
    cancel = clock.setTimeout(
      () => reject(new Error(`Reading ${topic} took longer than ${timeoutMs} ms; nothing was changed.`)),
      timeoutMs,
    );
  });
  try {
    await cluster.addTargetTopic(topic);
    const read = Promise.all(
      wanted.map(
        async (range) =>
          [range.partition, await readRange(cluster, topic, range, budgetOf?.(range.partition))] as const,
      ),
    );
    return new Map(await Promise.race([read, timeout]));
  } finally {
    cancel?.();
  }
}

/** What `readRangesWithin` asks of a read budget (`ReadBudget` with a record's size). */
export interface RecordBudget {
  /** Counts the record; false when the read must not keep it (nor any after it). */
  admit(message: KafkaMessage): boolean;
  /** Bytes left: a fetch asks for no more (the broker still returns one whole batch). */
  readonly remainingBytes: number;
}

async function readRange(
  cluster: RedriveCluster,
  topic: string,
  range: PartitionRange,
  budget: RecordBudget | undefined,
): Promise<RangeRead> {
  const found: KafkaMessage[] = [];
  let position = range.from;
  while (position < range.to) {
    const maxBytes = budget
      ? Math.min(FETCH_BYTES, Math.max(MIN_FETCH_BYTES, budget.remainingBytes))
      : FETCH_BYTES;
    const fetched = await fetchAt(cluster, topic, range.partition, position, maxBytes);
    const batch = fetchedBatch(topic, position, fetched);
    for (const message of batch.messages) {
      if (BigInt(message.offset) >= range.to) continue;
      if (budget && !budget.admit(message))
        return { messages: found, cut: true, nextAt: Number(message.timestamp) };
      found.push(message);
    }
    // Nothing at or after the position: the partition ends here for now (high watermark, compacted tail).
    if (batch.lastOffset === undefined) break;
    position = BigInt(batch.lastOffset) + 1n;
  }
  return { messages: found, cut: false };
}

/** One fetch of one partition from its leader; a leader that moved is looked up again (up to 3 times). */
async function fetchAt(
  cluster: RedriveCluster,
  topic: string,
  partition: number,
  offset: bigint,
  maxBytes: number,
): Promise<FetchedPartition> {
  for (let attempt = 1; ; attempt++) {
    try {
      const [nodeId] = Object.keys(cluster.findLeaderForPartitions(topic, [partition]));
      if (nodeId === undefined) throw new NoLeaderError(topic, partition);
      const broker = await cluster.findBroker({ nodeId });
      const { responses } = await broker.fetch({
        maxWaitTime: 0,
        minBytes: 1,
        maxBytes,
        topics: [{ topic, partitions: [{ partition, fetchOffset: offset.toString(), maxBytes }] }],
      });
      const topicData = responses.find((r) => r.topicName === topic);
      return topicData?.partitions.find((p) => p.partition === partition) ?? noRecords(partition);
    } catch (error) {
      if (attempt >= 3 || (error as { retriable?: unknown }).retriable !== true) throw error;
      await cluster.refreshMetadata();
    }
  }
}

const noRecords = (partition: number): FetchedPartition => ({ partition, highWatermark: '-1', messages: [] });

/** The metadata names no leader for a partition (yet): worth looking up again. */
class NoLeaderError extends Error {
  readonly retriable = true;

  constructor(topic: string, partition: number) {
    super(`Partition ${partition} of ${topic} has no leader`);
    this.name = 'NoLeaderError';
  }
}
