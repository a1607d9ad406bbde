import { Admin, SeekEntry } from 'kafkajs';
import { redriveGroupOf } from './partition-ranges';

/**
 * Of `wanted`, the offsets ahead of what the redrive group of `topic` committed: a redrive's commit never
 * moves a partition back (which would make moved records pending again, and a later redrive repeat them).
 */
export async function forwardOnly(
  admin: Pick<Admin, 'fetchOffsets'>,
  topic: string,
  wanted: readonly SeekEntry[],
): Promise<SeekEntry[]> {
  const [committed] = await admin.fetchOffsets({ groupId: redriveGroupOf(topic), topics: [topic] });
  const current = new Map((committed?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
  return wanted.filter((w) => BigInt(w.offset) > (current.get(w.partition) ?? -1n));
}
