import { TestingModule } from '@nestjs/testing';
import { LogicalRelay, LogicalRoundResult } from 'nest-reliable-messaging/testing';
import { MessagingHealthIndicator, newMessageId } from 'nest-reliable-messaging';
import { infraEnv } from '../../harness/infra';
import { KafkaTopics } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { PostgresCluster } from '../../harness/postgres-cluster';
import { createLogicalSchema, LogicalSchema, startLogicalCluster } from '../support/logical-cluster';
import { createMessagingApp } from '../support/messaging-app';
import { OrdersService, ordersWriter } from '../support/orders.fixture';
import { readOutboxRows, waitUntil } from '../support/outbox-rows';
import { ReadRecord, TopicReader } from '../support/topic-reader';

const CUSTOMERS = 7;
const ORDERS = 70;

/**
 * `relay.mode: 'logical'` over Kafka on a private cluster with `wal_level = logical`: `OutboxService.add()`
 * writes into the log (no outbox row), the relay reads the slot, publishes every committed message once in
 * each key's order, nothing of a rolled-back transaction, and confirms the slot's position as the broker
 * confirms.
 */
describe('Logical relay (PostgreSQL log → Kafka)', () => {
  const topics = new KafkaTopics();
  const readers: TopicReader[] = [];
  let cluster: PostgresCluster;
  let db: LogicalSchema;
  let app: TestingModule;
  let topic: string;

  beforeAll(async () => {
    cluster = await startLogicalCluster('logical-relay');
    db = await createLogicalSchema(cluster, 'logical_relay');
    topic = await topics.create(uniqueName('orders_logical'), 3);
    app = await createMessagingApp({
      schema: db,
      transport: { kind: 'kafka', brokers: infraEnv().kafkaBrokers },
      messaging: { relay: { mode: 'logical' } },
      ...ordersWriter(topic),
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(readers.map((reader) => reader.stop()));
    await app?.close();
    await topics.cleanup();
    await db?.drop();
    await cluster?.destroy();
  });

  const read = async (count: number): Promise<ReadRecord[]> => {
    const reader = await new TopicReader(topic).start();
    readers.push(reader);
    await reader.waitFor(count);
    return reader.settle();
  };

  // claim: C-90, C-94
  it('publishes every committed message once, in order per key, with no outbox row', async () => {
    const rounds: LogicalRoundResult[] = [];
    const stop = app.get(LogicalRelay).onRound((round) => rounds.push(round));
    const orders = app.get(OrdersService);
    for (let seq = 1; seq <= ORDERS; seq++) await orders.place(`customer-${seq % CUSTOMERS}`, seq, seq);
    await expect(orders.placeThenFail('customer-rolled-back')).rejects.toThrow('business rule');

    const records = await read(ORDERS);
    stop();
    expect(records).toHaveLength(ORDERS);
    expect(new Set(records.map((r) => r.headers['msg.id'])).size).toBe(ORDERS);
    const seqs = records.map((r) => JSON.parse(r.value) as { seq: number; customer: string });
    expect(seqs.some((e) => e.customer === 'customer-rolled-back')).toBe(false);
    for (let c = 0; c < CUSTOMERS; c++) {
      const ofKey = seqs.filter((e) => e.customer === `customer-${c}`).map((e) => e.seq);
      expect(ofKey).toEqual([...ofKey].sort((a, b) => a - b));
    }
    expect(await readOutboxRows(db)).toEqual([]);
    expect(rounds.reduce((sum, r) => sum + r.confirmed, 0)).toBe(ORDERS);
  });

  it('confirms the slot up to the last message the broker confirmed', async () => {
    const relay = app.get(LogicalRelay);
    const slot = await waitUntil('the slot confirms everything', async () => {
      const state = await relay.slotState();
      return state && state.lagBytes !== undefined && state.lagBytes < 1_024 && state;
    });
    expect(slot.active).toBe(true);
    expect(relay.status()).toMatchObject({ state: 'reading', lagSeconds: 0, unconfirmed: 0 });
    const health = await app.get(MessagingHealthIndicator).relay();
    expect(health.relay).toMatchObject({ status: 'up', mode: 'logical', state: 'reading', active: true });
  });

  // claim: C-89
  it('sends both messages of an id given twice to add() (logical mode keeps no index to refuse it)', async () => {
    const id = newMessageId();
    const orders = app.get(OrdersService);
    await orders.placeWithId('customer-twice', 1, id);
    await orders.placeWithId('customer-twice', 1, id);
    await orders.place('customer-after', 1, 1);
    const records = await read(ORDERS + 3);
    const twice = records.filter((r) => r.headers['msg.id'] === id);
    expect(twice).toHaveLength(2);
    expect(twice[1].value).toBe(twice[0].value);
  });
});
