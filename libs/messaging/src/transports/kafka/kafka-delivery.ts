import { KafkaMessage } from 'kafkajs';
import { Delivery } from '../delivery-contract';

/**
 * A Kafka record as a delivery. `destination` is the topic it was published to (for a retry topic, the
 * topic it retries); `retryTierMs` the tier of the retry topic it was read from, if any.
 */
export function kafkaDelivery(
  topic: string,
  destination: string,
  partition: number,
  message: KafkaMessage,
  retryTierMs?: number,
): Delivery {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (value === undefined) continue;
    headers[name] = (Array.isArray(value) ? value[0] : value).toString();
  }
  return {
    wire: {
      destination,
      key: message.key === null ? null : message.key.toString(),
      headers,
      body: message.value ?? Buffer.alloc(0),
    },
    origin: { source: topic, partition, offset: message.offset, retryTierMs },
  };
}
