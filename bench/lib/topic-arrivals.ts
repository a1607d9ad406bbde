import { Kafka } from 'kafkajs';
import { benchName } from './databases';
import { now, sleep } from './time';

/** Topic settings under which each record carries the time the broker appended it. */
export const APPEND_TIME_TOPIC = [{ name: 'message.timestamp.type', value: 'LogAppendTime' }];

/**
 * Waits until a topic holds `count` records (its end offsets, every `everyMs`), calling `onFirst` when the
 * first shows up; rejects after `stallMs` without a new one.
 */
export async function waitForRecords(
  kafka: Kafka,
  topic: string,
  count: number,
  options: {
    everyMs?: number;
    stallMs?: number;
    onFirst?: () => void;
    onProgress?: (done: number) => void;
  } = {},
): Promise<void> {
  const stallMs = options.stallMs ?? 120_000;
  const admin = kafka.admin();
  await admin.connect();
  try {
    let seen = 0;
    let changed = now();
    for (;;) {
      const offsets = await admin.fetchTopicOffsets(topic);
      const total = offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
      if (total > seen) {
        if (seen === 0) options.onFirst?.();
        seen = total;
        changed = now();
        options.onProgress?.(total);
      }
      if (total >= count) return;
      if (now() - changed > stallMs) {
        throw new Error(`${topic} holds ${total} of ${count} records, none new for ${stallMs} ms`);
      }
      await sleep(options.everyMs ?? 20);
    }
  } finally {
    await admin.disconnect();
  }
}

/**
 * The rate at which `count` records were appended to a topic created with `APPEND_TIME_TOPIC`: (count − 1) over
 * the broker's append times of the first and the last, read back from the topic. Measured the same way for
 * any relay, ours or a peer, from outside both; the relay's start, connection and first read are left out.
 */
export async function appendRate(kafka: Kafka, topic: string, count: number): Promise<number> {
  const consumer = kafka.consumer({ groupId: benchName('bench_append_times'), maxWaitTimeInMs: 100 });
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  let read = 0;
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          eachBatch: async ({ batch }) => {
            for (const message of batch.messages) {
              const at = Number(message.timestamp);
              first = Math.min(first, at);
              last = Math.max(last, at);
              read++;
            }
            if (read >= count) resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return ((count - 1) * 1000) / Math.max(1, last - first);
}
