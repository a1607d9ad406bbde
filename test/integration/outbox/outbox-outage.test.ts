import { TestingModule } from '@nestjs/testing';
import { KafkaBroker } from '../../../tools/infra/kafka-broker';
import { startPrivateBroker, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestDatabase, TEST_DIALECTS, TestDatabase, TestDialect } from '../../harness/test-database';
import { KafkaProducerClient } from 'nest-reliable-messaging';
import { createMessagingApp } from '../support/messaging-app';
import { OrdersService, ordersWriter } from '../support/orders.fixture';
import { OutboxRowState, readOutboxRows, waitUntil } from '../support/outbox-rows';
import { TopicReader } from '../support/topic-reader';

/** One application per database (and Kafka producer client), each with its outbox and topic, through the same outage. */
interface Lane {
  readonly name: string;
  readonly topic: string;
  readonly db: TestDatabase;
  readonly app: TestingModule;
}

/**
 * The blog post's broker-outage test against the relay: Kafka (a private broker of this suite) goes away,
 * requests keep succeeding, rows wait in the outbox with their failures recorded, and once Kafka is back
 * the relay delivers every message by itself, once. One outage for both databases and both producer clients:
 * applications on PostgreSQL and MariaDB publishing with kafkajs, and one on PostgreSQL publishing with
 * @platformatic/kafka (`transport.producerClient`), write through it side by side.
 */
describe('Outbox relay through a Kafka outage (private broker; PostgreSQL and MariaDB, both producer clients)', () => {
  const N = 20;
  let broker: KafkaBroker;
  const lanes: Lane[] = [];
  const databases: TestDatabase[] = [];
  const readers: TopicReader[] = [];

  beforeAll(async () => {
    broker = await startPrivateBroker();
    const admin = testKafka(broker.brokers).admin();
    await admin.connect();
    const setups: Array<{ dialect: TestDialect; producerClient: KafkaProducerClient }> = [
      ...TEST_DIALECTS.map((dialect) => ({ dialect, producerClient: 'kafkajs' as const })),
      { dialect: 'postgres', producerClient: 'platformatic' },
    ];
    for (const { dialect, producerClient } of setups) {
      const name = `${dialect}, ${producerClient}`;
      const db = await createTestDatabase(dialect, `outbox_outage_${producerClient}`);
      databases.push(db);
      const topic = uniqueName(`orders_outage_${dialect}_${producerClient}`);
      await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
      const app = await createMessagingApp({
        schema: db,
        transport: { kind: 'kafka', brokers: broker.brokers, producerClient },
        ...ordersWriter(topic),
        messaging: { relay: { retryInitialDelayMs: 100, retryMaxDelayMs: 1_000 } },
      });
      lanes.push({ name, topic, db, app });
    }
    await admin.disconnect();
  });

  afterAll(async () => {
    await Promise.all(readers.map((reader) => reader.stop()));
    await Promise.all(lanes.map((lane) => lane.app.close()));
    await broker?.destroy();
    await Promise.all(databases.map((db) => db.drop()));
  });

  // claim: C-23
  it('keeps every row while the broker is down and publishes each once after it returns', async () => {
    // A warm producer first: the outage then also breaks an established connection, not only new ones.
    for (const { app, db } of lanes) {
      await app.get(OrdersService).place('warm-up', 1, 0);
      await waitUntil('the warm-up row is sent', async () => (await readOutboxRows(db))[0]?.sentAt);
    }

    await broker.stop();
    for (let i = 1; i <= N; i++) {
      for (const { app } of lanes) await app.get(OrdersService).place(`customer-${i % 4}`, i, i);
    }

    // A key's later rows wait behind its first while that one fails (released without an attempt when
    // they went out in the same batch): the first row of each key has failed at least once.
    for (const { name, db } of lanes) {
      const pending = await waitUntil(
        `the first row of each key written during the outage has failed at least once (${name})`,
        async () => {
          const rows = (await readOutboxRows(db)).slice(1);
          const firsts = [...new Set(rows.map((r) => r.key))].map((key) => rows.find((r) => r.key === key));
          return rows.length === N && firsts.every((r) => r && r.attempts >= 1 && r.lastError) && rows;
        },
        30_000,
      );
      expect(pending.every((r) => r.sentAt === null)).toBe(true);
      expect(pending[0].lastError).toMatch(/^(REJECTED|AMBIGUOUS): /);
      console.log(
        `[outbox-outage ${name}] errors recorded: ${[...new Set(pending.map((r) => r.lastError))].join(' | ')}`,
      );
    }

    const startCalled = Date.now();
    await broker.start();
    const brokerBack = Date.now();
    const sent = await Promise.all(
      lanes.map(async ({ name, db }) => {
        const rows = await waitUntil(
          `every row is sent after the broker returned (${name})`,
          async () => {
            const all = await readOutboxRows(db);
            return all.every((r) => r.sentAt !== null) && all;
          },
          30_000,
          50,
        );
        // The broker counts as back when it answers clients; the relay's backoff (≤ 1 s) comes on top.
        console.log(
          `[outbox-outage ${name}] broker start took ${brokerBack - startCalled} ms; all ${N} pending rows ` +
            `sent ${Date.now() - brokerBack} ms after the broker answered; publish attempts per row during ` +
            `the outage: max ${Math.max(...rows.map((r) => r.attempts))}`,
        );
        return rows;
      }),
    );

    for (const [i, { topic }] of lanes.entries()) {
      const rows: OutboxRowState[] = sent[i];
      expect(rows.every((r) => r.lockedBy === null)).toBe(true);
      const reader = await new TopicReader(topic, testKafka(broker.brokers)).start();
      readers.push(reader);
      await reader.waitFor(N + 1);
      const records = await reader.settle();
      const ids = records.map((r) => r.headers['msg.id']);
      // Every row written during the outage is on the topic once. The warm-up is the first publish to a
      // fresh broker: when that publish was not confirmed (its row records a failed attempt), the relay
      // rightly sends it again (at least once); a confirmed publish is never repeated.
      const [warmUp, ...outageRows] = rows;
      const outageIds = ids.filter((id) => id !== warmUp.messageId);
      expect(outageIds).toHaveLength(N);
      expect(new Set(outageIds)).toEqual(new Set(outageRows.map((r) => r.messageId)));
      const warmUpCopies = ids.length - outageIds.length;
      expect(warmUpCopies).toBeGreaterThanOrEqual(1);
      if (warmUp.attempts === 0) expect(warmUpCopies).toBe(1);
      for (const key of ['customer-0', 'customer-1', 'customer-2', 'customer-3']) {
        const seqs = records
          .filter((r) => r.key === key)
          .map((r) => (JSON.parse(r.value) as { seq: number }).seq);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      }
    }
  });
});
