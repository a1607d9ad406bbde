import { KafkaMessage } from 'kafkajs';
import { KafkaTopics, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';

describe('Kafka (smoke)', () => {
  const kafka = testKafka();
  const topics = new KafkaTopics(kafka);

  afterAll(async () => {
    await topics.cleanup();
  });

  it('produces with an idempotent acks=all producer and consumes in a group with commits', async () => {
    const topic = await topics.create(uniqueName('smoke_topic'), 3);
    const groupId = uniqueName('smoke_group');

    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({
      topic,
      acks: -1,
      messages: ['a', 'b', 'c'].map((key) => ({ key, value: `value-${key}`, headers: { 'msg.id': key } })),
    });
    await producer.disconnect();

    const consumer = kafka.consumer({ groupId });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const seen: KafkaMessage[] = [];
    await new Promise<void>((resolve) => {
      void consumer.run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          seen.push(message);
          await consumer.commitOffsets([
            { topic, partition, offset: (BigInt(message.offset) + 1n).toString() },
          ]);
          if (seen.length === 3) resolve();
        },
      });
    });
    await consumer.disconnect();

    expect(seen.map((m) => m.value?.toString()).sort()).toEqual(['value-a', 'value-b', 'value-c']);
    const admin = kafka.admin();
    await admin.connect();
    const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
    const total = committed.partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
    expect(total).toBe(3);
    await admin.deleteGroups([groupId]);
    await admin.disconnect();
  });
});
