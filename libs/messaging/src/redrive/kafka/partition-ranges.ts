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

/** How many records the ranges hold. */
export function recordsIn(ranges: readonly PartitionRange[]): number {
  return ranges.reduce((sum, r) => sum + Number(r.to - r.from), 0);
}
