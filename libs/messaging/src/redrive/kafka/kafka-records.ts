import { KafkaMessage } from 'kafkajs';
import { DeadLetterRecord } from '../dead-letter-record';

/** A record of a dead-letter topic as a redrive record. */
export function kafkaRecord(topic: string, partition: number, message: KafkaMessage): DeadLetterRecord {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (value === undefined) continue;
    headers[name] = (Array.isArray(value) ? value[0] : value).toString();
  }
  return {
    position: { kind: 'partition', partition, offset: message.offset },
    wire: {
      destination: topic,
      key: message.key === null ? null : message.key.toString(),
      headers,
      body: message.value ?? Buffer.alloc(0),
    },
  };
}
