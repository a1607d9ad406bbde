import { TestingModule } from '@nestjs/testing';
import { OutboxStore } from 'nest-reliable-messaging/testing';
import { KafkaTopics } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { OrdersService, ordersWriter } from '../support/orders.fixture';
import { TopicReader } from '../support/topic-reader';

/**
 * Rows a crashed instance claimed wait for its lease. A relay starting meanwhile (the restarted process)
 * finds them held and wakes when the lease expires: with a one-minute safety poll, only that wake-up can
 * publish them within the test's time.
 */
describe('Outbox relay wakes when held rows free up (PostgreSQL + Kafka)', () => {
  const topic = uniqueName('orders_held');
  const topics = new KafkaTopics();
  let schema: TestSchema;
  let reader: TopicReader;
  const apps: TestingModule[] = [];

  const app = (relay: object) =>
    createMessagingApp({
      schema: schema.name,
      transport: kafkaTransport(),
      ...ordersWriter(topic),
      messaging: { relay },
    });

  beforeAll(async () => {
    schema = await createTestSchema('outbox_held');
    await topics.create(topic);
    reader = await new TopicReader(topic).start();
  });

  afterAll(async () => {
    await reader.stop();
    for (const started of apps.splice(0)) await started.close();
    await topics.cleanup();
    await schema.drop();
  });

  // claim: C-26
  it("publishes a crashed instance's rows soon after its lease expires, long before the safety poll", async () => {
    const crashed = await app({ enabled: false });
    apps.push(crashed);
    for (let i = 0; i < 5; i++) await crashed.get(OrdersService).place('k', i, i);
    const claimed = await crashed.get(OutboxStore).claim(100, 'crashed-instance', 3_000);
    expect(claimed).toHaveLength(5);

    const survivor = await app({ pollIntervalMs: 60_000 });
    apps.push(survivor);
    const records = await reader.waitFor(5, 30_000);
    expect(records.map((r) => (JSON.parse(r.value) as { seq: number }).seq)).toEqual([0, 1, 2, 3, 4]);
  });
});
