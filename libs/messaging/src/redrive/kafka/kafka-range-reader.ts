import { KafkaMessage } from 'kafkajs';
import { CancelTimer, Clock, systemClock } from '../../common/clock';
import { FetchedPartition, fetchedBatch, RedriveCluster } from './kafkajs-cluster.patch';
import { PartitionRange } from './partition-ranges';

/** Bytes one fetch of one partition asks for (the broker returns at least one whole batch anyway). */
const FETCH_BYTES = 4 * 1024 * 1024;

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
      wanted.map(async (range) => [range.partition, await readRange(cluster, topic, range)] as const),
    );
    return new Map(await Promise.race([read, timeout]));
  } finally {
    cancel?.();
  }
}

async function readRange(
  cluster: RedriveCluster,
  topic: string,
  range: PartitionRange,
): Promise<KafkaMessage[]> {
  const found: KafkaMessage[] = [];
  let position = range.from;
  while (position < range.to) {
    const fetched = fetchedBatch(topic, position, await fetchAt(cluster, topic, range.partition, position));
    for (const message of fetched.messages) {
      if (BigInt(message.offset) < range.to) found.push(message);
    }
    // Nothing at or after the position: the partition ends here for now (high watermark, compacted tail).
    if (fetched.lastOffset === undefined) break;
    position = BigInt(fetched.lastOffset) + 1n;
  }
  return found;
}

/** One fetch of one partition from its leader; a leader that moved is looked up again (up to 3 times). */
async function fetchAt(
  cluster: RedriveCluster,
  topic: string,
  partition: number,
  offset: bigint,
): Promise<FetchedPartition> {
  for (let attempt = 1; ; attempt++) {
    try {
      const [nodeId] = Object.keys(cluster.findLeaderForPartitions(topic, [partition]));
      if (nodeId === undefined) throw new NoLeaderError(topic, partition);
      const broker = await cluster.findBroker({ nodeId });
      const { responses } = await broker.fetch({
        maxWaitTime: 0,
        minBytes: 1,
        maxBytes: FETCH_BYTES,
        topics: [
          { topic, partitions: [{ partition, fetchOffset: offset.toString(), maxBytes: FETCH_BYTES }] },
        ],
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
