import { Admin } from 'kafkajs';

/** Offsets `[from, to)` of one partition of a dead-letter topic. */
export interface PartitionRange {
  readonly partition: number;
  readonly from: bigint;
  readonly to: bigint;
}

/** The consumer group whose committed offsets mark what was redriven from a dead-letter topic. */
export function redriveGroupOf(deadLetterTopic: string): string {
  return `${deadLetterTopic}.redrive`;
}

/**
 * Where the not-yet-redriven records of a partition start and end: from the redrive group's committed
 * offset (or the log start, when nothing was committed or retention deleted past it) to the high watermark.
 */
export function pendingRange(
  partition: number,
  low: bigint,
  high: bigint,
  committed: bigint,
): PartitionRange {
  const from = committed >= low ? committed : low;
  return { partition, from: from > high ? high : from, to: high };
}

/** The pending range of every partition of `topic`, by partition. */
export async function pendingRanges(admin: Admin, topic: string): Promise<PartitionRange[]> {
  const offsets = await admin.fetchTopicOffsets(topic);
  const [committed] = await admin.fetchOffsets({ groupId: redriveGroupOf(topic), topics: [topic] });
  const byPartition = new Map((committed?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
  return offsets
    .map((o) => pendingRange(o.partition, BigInt(o.low), BigInt(o.high), byPartition.get(o.partition) ?? -1n))
    .sort((a, b) => a.partition - b.partition);
}

/** The admin calls a listing makes. */
type ListingAdmin = Pick<Admin, 'fetchTopicOffsets' | 'fetchOffsets' | 'listTopics'>;

/** Tries of a topic the broker does not host (yet) before a listing gives up on it. */
const UNHOSTED_TRIES = 5;

/**
 * The pending records of `topic` for a listing of dead-letter topics, or undefined when the topic is gone
 * (deleted after the listing named it). A topic created a moment ago may not be hosted by its partitions'
 * leaders yet ("This server does not host this topic-partition"): asked again, up to 5 times, 200 ms, 400 ms
 * ... apart. Anything else fails the listing.
 */
export async function pendingWhileListing(
  admin: ListingAdmin,
  topic: string,
  sleep: (ms: number) => Promise<void>,
): Promise<number | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return recordsIn(await pendingRanges(admin as Admin, topic));
    } catch (error) {
      if (!isUnknownTopic(error)) throw error;
      if (!(await admin.listTopics()).includes(topic)) return undefined;
      if (attempt >= UNHOSTED_TRIES) throw error;
      await sleep(200 * attempt);
    }
  }
}

/** kafkajs's UNKNOWN_TOPIC_OR_PARTITION, also as the cause of its retries' error. */
function isUnknownTopic(error: unknown): boolean {
  for (let e = error as { type?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; depth++) {
    if (e.type === 'UNKNOWN_TOPIC_OR_PARTITION') return true;
    e = e.cause as typeof e;
  }
  return false;
}

/** How many records the ranges hold. */
export function recordsIn(ranges: readonly PartitionRange[]): number {
  return ranges.reduce((sum, r) => sum + Number(r.to - r.from), 0);
}
