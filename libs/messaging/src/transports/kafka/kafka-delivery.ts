import { KafkaMessage } from 'kafkajs';
import { MessageHeaders } from '../../envelope/message-headers';
import { Delivery } from '../subscription.interface';

/**
 * A Kafka record as a delivery. `destination` is the topic it was published to (for a retry topic, the
 * topic it retries); the attempt counts the failures before it: `failedInPlace` (the last attempt that
 * failed while the partition was held for this record) or else the `msg.retry-attempt` it carries.
 */
export function kafkaDelivery(
  topic: string,
  destination: string,
  partition: number,
  message: KafkaMessage,
  failedInPlace?: number,
): Delivery {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (value === undefined) continue;
    headers[name] = (Array.isArray(value) ? value[0] : value).toString();
  }
  const retried = Number.parseInt(headers[MessageHeaders.RETRY_ATTEMPT] ?? '0', 10);
  const priorFailures = failedInPlace ?? (Number.isFinite(retried) && retried > 0 ? retried : 0);
  return {
    wire: {
      destination,
      key: message.key === null ? null : message.key.toString(),
      headers,
      body: message.value ?? Buffer.alloc(0),
    },
    attempt: priorFailures + 1,
    origin: { source: topic, partition, offset: message.offset },
  };
}

/** How long a retry-topic record is not due yet, ms (0 when due, or without a due time). */
export function notDueForMs(message: KafkaMessage, now: number): number {
  const dueAt = message.headers?.[MessageHeaders.RETRY_DUE_AT];
  return dueAt ? Date.parse(String(dueAt)) - now : 0;
}
