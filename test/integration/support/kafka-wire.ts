import { Kafka, Producer } from 'kafkajs';
import { WireMessage } from 'nest-reliable-messaging/testing';

/** Writes wire messages straight onto Kafka, as any producer could (good ones, duplicates, garbage). */
export class RawKafkaProducer {
  private producer?: Producer;

  constructor(private readonly kafka: Kafka) {}

  async send(messages: WireMessage[], partition?: number): Promise<void> {
    if (!this.producer) {
      this.producer = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await this.producer.connect();
    }
    await this.producer.sendBatch({
      acks: -1,
      topicMessages: messages.map((message) => ({
        topic: message.destination,
        messages: [{ key: message.key, value: message.body, headers: { ...message.headers }, partition }],
      })),
    });
  }

  async stop(): Promise<void> {
    await this.producer?.disconnect();
  }
}

/** Sum of a group's committed offsets on a topic (how many records it settled, from offset 0). */
export async function committedTotal(kafka: Kafka, groupId: string, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [result] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return result.partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
  } finally {
    await admin.disconnect();
  }
}
