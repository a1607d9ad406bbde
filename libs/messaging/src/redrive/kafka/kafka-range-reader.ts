import { randomUUID } from 'node:crypto';
import { Admin, Kafka, KafkaMessage } from 'kafkajs';
import { CancelTimer, Clock, systemClock } from '../../common/clock';
import { PartitionRange, redriveGroupOf } from './partition-ranges';

/**
 * Reads offset ranges of a topic and commits nothing: kafkajs only reads through a consumer group, so this
 * one uses a throw-away group (`<topic>.redrive.read.<uuid>`), seeks each partition to its range's start,
 * never commits, and deletes the group afterwards. Resolves with each partition's records, by offset. The
 * deadline runs on `clock`.
 */
export async function readRanges(
  kafka: Kafka,
  admin: Admin,
  topic: string,
  ranges: readonly PartitionRange[],
  timeoutMs: number,
  clock: Pick<Clock, 'setTimeout'> = systemClock,
): Promise<Map<number, KafkaMessage[]>> {
  const wanted = new Map(ranges.filter((r) => r.to > r.from).map((r) => [r.partition, r]));
  const found = new Map<number, Map<string, KafkaMessage>>();
  if (wanted.size === 0) return new Map();
  const groupId = `${redriveGroupOf(topic)}.read.${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false, maxWaitTimeInMs: 100 });
  const finished = new Set<number>();
  let complete: () => void = () => undefined;
  const allRead = new Promise<void>((resolve) => (complete = resolve));
  let cancel: CancelTimer | undefined;
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const range = wanted.get(batch.partition);
        if (!range) return;
        const records = found.get(range.partition) ?? new Map<string, KafkaMessage>();
        found.set(range.partition, records);
        for (const message of batch.messages) {
          const offset = BigInt(message.offset);
          if (offset >= range.from && offset < range.to) records.set(message.offset, message);
        }
        const last = batch.messages.at(-1);
        if (last && BigInt(last.offset) >= range.to - 1n) finished.add(range.partition);
        if (finished.size === wanted.size) complete();
      },
    });
    for (const range of wanted.values()) {
      consumer.seek({ topic, partition: range.partition, offset: range.from.toString() });
    }
    const timeout = new Promise<never>((_, reject) => {
      cancel = clock.setTimeout(
        () => reject(new Error(`Reading ${topic} took longer than ${timeoutMs} ms; nothing was changed.`)),
        timeoutMs,
      );
    });
    await Promise.race([allRead, timeout]);
  } finally {
    cancel?.();
    await consumer.disconnect().catch(() => undefined);
    await admin.deleteGroups([groupId]).catch(() => undefined);
  }
  const byPartition = new Map<number, KafkaMessage[]>();
  for (const [partition, records] of found) {
    byPartition.set(
      partition,
      [...records.values()].sort((a, b) => (BigInt(a.offset) < BigInt(b.offset) ? -1 : 1)),
    );
  }
  return byPartition;
}
