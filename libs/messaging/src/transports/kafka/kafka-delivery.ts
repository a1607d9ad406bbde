import { KafkaMessage } from 'kafkajs';
import { MessageHeaders } from '../../envelope/message-headers';
import { Delivery } from '../subscription.interface';

/**
 * A Kafka record as a delivery. `destination` is the topic it was published to (for a retry topic, the
 * topic it retries); `retryTierMs` the tier of the retry topic it was read from, if any. The attempt counts
 * the failures before it: `failedInPlace` (the last attempt that failed while the partition was held for
 * this record), else the `msg.retry-attempt` it carries, which counts only on a retry topic: on the
 * destination itself any producer could set it.
 */
export function kafkaDelivery(
  topic: string,
  destination: string,
  partition: number,
  message: KafkaMessage,
  retryTierMs?: number,
  failedInPlace?: number,
): Delivery {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (value === undefined) continue;
    headers[name] = (Array.isArray(value) ? value[0] : value).toString();
  }
  const retried =
    retryTierMs === undefined ? 0 : Number.parseInt(headers[MessageHeaders.RETRY_ATTEMPT] ?? '0', 10);
  const priorFailures = failedInPlace ?? (Number.isFinite(retried) && retried > 0 ? retried : 0);
  return {
    wire: {
      destination,
      key: message.key === null ? null : message.key.toString(),
      headers,
      body: message.value ?? Buffer.alloc(0),
    },
    attempt: priorFailures + 1,
    origin: { source: topic, partition, offset: message.offset, retryTierMs },
  };
}

/** When a retry-topic record is due (epoch ms), or NaN without a valid `msg.retry-due-at`. */
export function retryDueAt(message: KafkaMessage): number {
  const dueAt = message.headers?.[MessageHeaders.RETRY_DUE_AT];
  return dueAt ? Date.parse(String(dueAt)) : Number.NaN;
}
