import { TestingModule } from '@nestjs/testing';
import { OutboxStore } from 'nest-reliable-messaging/testing';
import { KafkaTopics } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestDatabase, EACH_DATABASE, TestDatabase } from '../../harness/test-database';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { OrdersService, ordersWriter } from '../support/orders.fixture';
import { readOutboxRows, waitUntil } from '../support/outbox-rows';
import { TopicReader } from '../support/topic-reader';

/**
 * `retention.sentRetentionMs: 0`: the relay deletes a row once the broker confirmed it, instead of marking
 * it sent. Every message still reaches the topic once, in order per key, and only the instance that holds a
 * row may delete it: a relay whose lease ran out deletes nothing another instance took over.
 */
describe.each(EACH_DATABASE)('Outbox without sent rows: sentRetentionMs 0 (%s + Kafka)', (_, dialect) => {
  const N = 30;
  const topic = uniqueName('orders_keep_none');
  const topics = new KafkaTopics();
  let db: TestDatabase;
  let reader: TopicReader;
  const apps: TestingModule[] = [];

  const start = async (relay: object) => {
    const app = await createMessagingApp({
      schema: db,
      transport: kafkaTransport(),
      ...ordersWriter(topic),
      messaging: { relay, retention: { sentRetentionMs: 0 } },
    });
    apps.push(app);
    return app;
  };

  beforeAll(async () => {
    db = await createTestDatabase(dialect, 'outbox_keep_none');
    await topics.create(topic);
    reader = await new TopicReader(topic).start();
  });

  afterAll(async () => {
    await reader.stop();
    for (const app of apps.splice(0)) await app.close();
    await topics.cleanup();
    await db.drop();
  });

  it('publishes every row once, in order per key, and deletes it once confirmed', async () => {
    // Batches of 4: the relay's claims (two batches each) mark the rows before in their statement.
    const app = await start({ batchSize: 4 });
    for (let i = 1; i <= N; i++) await app.get(OrdersService).place(`customer-${i % 3}`, i, i);
    await waitUntil('the outbox is empty', async () => (await readOutboxRows(db)).length === 0);
    await reader.waitFor(N);
    const records = await reader.settle();
    expect(records).toHaveLength(N);
    for (const key of ['customer-0', 'customer-1', 'customer-2']) {
      const seqs = records
        .filter((r) => r.key === key)
        .map((r) => (JSON.parse(r.value) as { seq: number }).seq);
      expect(seqs).toHaveLength(N / 3);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }
  });

  it('lets only the instance that holds a row delete it', async () => {
    for (const earlier of apps.splice(0)) await earlier.close();
    const app = await start({ enabled: false });
    const store = app.get(OutboxStore);
    const orders = app.get(OrdersService);
    for (const seq of [1, 2, 3]) await orders.place('late', seq, seq);
    const [r1, r2, r3] = (await store.claim(100, 'late-instance', 60_000)).map((r) => r.id);
    // The late instance stalls past its lease on r1 and r2; another instance takes r2 over (a lease of its
    // own); r1 nobody took.
    const past =
      dialect === 'postgres' ? "now() - interval '1 second'" : 'utc_timestamp(6) - interval 1 second';
    await db.query(`update messaging_outbox set locked_until = ${past} where id = ${r1}`);
    await db.query(`update messaging_outbox set locked_by = 'new-holder' where id = ${r2}`);

    // Its answers come in now, on their own and with its next claim: r1 and r3 are still its own.
    await store.markSent([r3], 'late-instance');
    expect(await store.claim(10, 'late-instance', 60_000, [r1, r2], [r1, r2])).toEqual([]);
    const left = await readOutboxRows(db);
    expect(left.map((r) => [r.id, r.lockedBy, r.sentAt])).toEqual([[r2, 'new-holder', null]]);

    await store.markSent([r2], 'new-holder');
    expect(await readOutboxRows(db)).toEqual([]);
  });
});
