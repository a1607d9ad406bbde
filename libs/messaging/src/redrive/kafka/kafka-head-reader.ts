import { KafkaMessage } from 'kafkajs';
import { DeadLetterRecord } from '../dead-letter-record';
import { headerValueBytes, ReadBudget } from '../read-budget';
import { mergeByTime } from './first-by-time';
import { RangeRead, RecordBudget } from './kafka-range-reader';
import { kafkaRecord } from './kafka-records';
import { PartitionRange } from './partition-ranges';

/** Records read per partition beyond its share of the limit, so that a slightly uneven topic needs one round. */
export const HEAD_SLACK = 10;

/** Reads ranges of the dead-letter topic, each within its budget (`readRangesWithin` with its cluster and timeout). */
export type HeadRangeReader = (
  ranges: readonly PartitionRange[],
  budgetOf: (partition: number) => RecordBudget,
) => Promise<Map<number, RangeRead>>;

/**
 * The first `limit` pending records of a dead-letter topic by time (`mergeByTime` over its partitions),
 * holding at most what `budget` admits. Each partition is read in chunks of `ceil(limit / partitions) +
 * HEAD_SLACK` records, not `limit`: a partition is read further only when the merge ran out of it, so a
 * read holds about `limit + partitions × chunk` records, not `partitions × limit`. Because a partition
 * read only in part stops the merge, the records returned are exactly the first ones of the merge of the
 * whole pending ranges (or, when the budget stops the read, a prefix of them).
 *
 * Each round shares what is left of the budget among the partitions it reads (at least one record each),
 * so that one partition of large records cannot spend it all on records the merge cannot take yet. A record
 * the budget refused still tells its time, so the merge goes on past its partition while others are older.
 */
export async function readHead(
  source: string,
  ranges: readonly PartitionRange[],
  limit: number,
  budget: ReadBudget,
  read: HeadRangeReader,
): Promise<DeadLetterRecord[]> {
  const chunk = BigInt(Math.ceil(limit / Math.max(1, ranges.length)) + HEAD_SLACK);
  const parts = ranges.map((r) => ({
    ...r,
    next: r.from,
    nextAt: undefined as number | undefined,
    items: [] as TimedRecord[],
  }));
  let toRead = parts.map((_, i) => i);
  for (;;) {
    const wanted = toRead.map((i) => parts[i]).filter((p) => p.next < p.to);
    if (wanted.length > 0 && !budget.exhausted) {
      const share = Math.max(1, Math.floor(budget.remainingBytes / wanted.length));
      const chunks = wanted.map((p) => ({
        partition: p.partition,
        from: p.next,
        to: min(p.to, p.next + chunk),
      }));
      const got = await read(chunks, () => shareOf(budget, share));
      wanted.forEach((part, i) => {
        const { messages, cut, nextAt } = got.get(part.partition) ?? { messages: [], cut: false };
        part.items.push(...messages.map((m) => timed(source, part.partition, m)));
        const last = messages.at(-1);
        part.next = !cut ? chunks[i].to : last ? BigInt(last.offset) + 1n : part.next;
        part.nextAt = cut ? nextAt : undefined;
      });
    }
    const lists = parts.map((p) => ({ items: p.items, complete: p.next >= p.to, nextAt: p.nextAt }));
    const { taken, blocked } = mergeByTime(lists, limit, (item) => item.at);
    if (taken.length >= limit || blocked.length === 0 || budget.exhausted) return taken.map((t) => t.record);
    toRead = blocked;
  }
}

/**
 * One partition's part of a round: refuses a record that would take it past `share` (unless it is its
 * first), and counts every record it keeps against the whole `budget`.
 */
function shareOf(budget: ReadBudget, share: number): RecordBudget {
  let used = 0;
  return {
    admit(message) {
      const bytes = kafkaMessageBytes(message);
      if (used > 0 && used + bytes > share) return false;
      if (!budget.admit(bytes)) return false;
      used += bytes;
      return true;
    },
    get remainingBytes() {
      return Math.min(budget.remainingBytes, Math.max(0, share - used));
    },
  };
}

/** A record's size as a read budget counts it: value, key and headers. */
export function kafkaMessageBytes(message: KafkaMessage): number {
  return (message.value?.length ?? 0) + (message.key?.length ?? 0) + headerValueBytes(message.headers ?? {});
}

interface TimedRecord {
  readonly record: DeadLetterRecord;
  readonly at: number;
}

function timed(source: string, partition: number, message: KafkaMessage): TimedRecord {
  return { record: kafkaRecord(source, partition, message), at: Number(message.timestamp) };
}

const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);
