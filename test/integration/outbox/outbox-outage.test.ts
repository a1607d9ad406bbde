import { TestingModule } from '@nestjs/testing';
import { Client } from 'pg';
import { KafkaBroker } from '../../../tools/infra/kafka-broker';
import { startPrivateBroker, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { OrdersService, ordersWriter } from '../support/orders.fixture';
import { readOutboxRows, waitUntil } from '../support/outbox-rows';
import { TopicReader } from '../support/topic-reader';

/**
 * The blog post's broker-outage test against the relay: Kafka (a private broker of this suite) goes away,
 * requests keep succeeding, rows wait in the outbox with their failures recorded, and once Kafka is back
 * the relay delivers every message by itself, once.
 */
describe('Outbox relay through a Kafka outage (private broker)', () => {
  const N = 20;
  const topic = uniqueName('orders_outage');
  let broker: KafkaBroker;
  let schema: TestSchema;
  let db: Client;
  let app: TestingModule | undefined;
  let reader: TopicReader | undefined;

  beforeAll(async () => {
    broker = await startPrivateBroker();
    schema = await createTestSchema('outbox_outage');
    db = await schema.connect();
    const admin = testKafka(broker.brokers).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
    await admin.disconnect();
    app = await createMessagingApp({
      schema: schema.name,
      transport: kafkaTransport(broker.brokers),
      ...ordersWriter(topic),
      messaging: { relay: { retryInitialDelayMs: 100, retryMaxDelayMs: 1_000 } },
    });
  });

  afterAll(async () => {
    await reader?.stop();
    await app?.close();
    await broker?.destroy();
    await schema?.drop();
  });

  it('keeps every row while the broker is down and publishes each once after it returns', async () => {
    const orders = app!.get(OrdersService);
    // A warm producer first: the outage then also breaks an established connection, not only new ones.
    await orders.place('warm-up', 1, 0);
    await waitUntil('the warm-up row is sent', async () => (await readOutboxRows(db))[0]?.sentAt);

    await broker.stop();
    for (let i = 1; i <= N; i++) await orders.place(`customer-${i % 4}`, i, i);

    const pending = await waitUntil(
      'every row written during the outage has failed at least once',
      async () => {
        const rows = (await readOutboxRows(db)).slice(1);
        return rows.length === N && rows.every((r) => r.attempts >= 1 && r.lastError) && rows;
      },
      30_000,
    );
    expect(pending.every((r) => r.sentAt === null)).toBe(true);
    expect(pending[0].lastError).toMatch(/^(REJECTED|AMBIGUOUS): /);
    console.log(
      `[outbox-outage] errors recorded: ${[...new Set(pending.map((r) => r.lastError))].join(' | ')}`,
    );

    const startCalled = Date.now();
    await broker.start();
    const brokerBack = Date.now();
    const rows = await waitUntil(
      'every row is sent after the broker returned',
      async () => {
        const all = await readOutboxRows(db);
        return all.every((r) => r.sentAt !== null) && all;
      },
      30_000,
      50,
    );
    const allSent = Date.now();
    // The broker counts as back when it answers clients; the relay's backoff (≤ 1 s) comes on top.
    console.log(
      `[outbox-outage] broker start took ${brokerBack - startCalled} ms; all ${N} pending rows sent ` +
        `${allSent - brokerBack} ms after the broker answered (${allSent - startCalled} ms after start); ` +
        `publish attempts per row during the outage: max ${Math.max(...rows.map((r) => r.attempts))}`,
    );
    expect(rows.every((r) => r.lockedBy === null)).toBe(true);

    reader = await new TopicReader(topic, testKafka(broker.brokers)).start();
    await reader.waitFor(N + 1);
    const records = await reader.settle();
    const ids = records.map((r) => r.headers['msg.id']);
    expect(ids).toHaveLength(N + 1);
    expect(new Set(ids).size).toBe(N + 1);
    expect(new Set(ids)).toEqual(new Set(rows.map((r) => r.messageId)));
    for (const key of ['customer-0', 'customer-1', 'customer-2', 'customer-3']) {
      const seqs = records
        .filter((r) => r.key === key)
        .map((r) => (JSON.parse(r.value) as { seq: number }).seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }
  });
});
