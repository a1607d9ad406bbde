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
  for (const name of Object.keys(message.headers ?? {})) {
    const value = kafkaHeader(message, name);
    if (value !== undefined) headers[name] = value;
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

/** A record's header as text: its first value when it has several (as a delivery's headers hold it). */
export function kafkaHeader(message: KafkaMessage, name: string): string | undefined {
  const value = message.headers?.[name];
  if (value === undefined) return undefined;
  return (Array.isArray(value) ? value[0] : value)?.toString();
}
