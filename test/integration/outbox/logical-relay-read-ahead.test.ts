import { TestingModule } from '@nestjs/testing';
import * as amqp from 'amqplib';
import { LogicalRelay } from 'nest-reliable-messaging/testing';
import { FaultProxy } from '../../harness/fault-proxy';
import { uniqueName } from '../../harness/names';
import { PostgresCluster } from '../../harness/postgres-cluster';
import { proxyUrl } from '../../harness/proxied';
import { RabbitFixture } from '../../harness/rabbitmq';
import { infraEnv } from '../../harness/infra';
import { createLogicalSchema, LogicalSchema, startLogicalCluster } from '../support/logical-cluster';
import { createMessagingApp, rabbitTransport } from '../support/messaging-app';
import { OrdersService, ordersWriter } from '../support/orders.fixture';
import { waitUntil } from '../support/outbox-rows';
import { QueueReader } from '../support/queue-reader';

const BATCH = 5;
/** Guide 13, "Memory bounded": `relay.batchSize` × 10 entries (a transaction and each of its messages). */
const LIMIT = BATCH * 10;
/** One order per transaction: two entries each, so four times the limit's worth of transactions. */
const ORDERS = 4 * LIMIT;

/**
 * Guide 13's read-ahead bound, on a private PostgreSQL cluster (`wal_level = logical`) with RabbitMQ behind a
 * fault proxy: while the broker cannot be reached nothing is confirmed, so the relay must stop reading at
 * `relay.batchSize` × 10 entries and leave the rest in the slot; once the broker is back it reads the rest and
 * every message goes, the copies beyond one bounded by what it held plus the two batches on the wire.
 */
describe('Logical relay read-ahead while the broker is away (PostgreSQL log → RabbitMQ)', () => {
  const rabbit = new RabbitFixture();
  let cluster: PostgresCluster;
  let db: LogicalSchema;
  let app: TestingModule;
  let proxy: FaultProxy;
  let connection: amqp.ChannelModel;
  let reader: QueueReader;
  const routed = uniqueName('orders_read_ahead');

  beforeAll(async () => {
    cluster = await startLogicalCluster('logical-read-ahead');
    db = await createLogicalSchema(cluster, 'logical_read_ahead');
    connection = await rabbit.connect();
    const queue = uniqueName(`${routed}_q`);
    rabbit.track({ exchanges: [routed], queues: [queue] });
    const channel = await connection.createChannel();
    await channel.assertExchange(routed, 'topic', { durable: true });
    await channel.assertQueue(queue, { durable: false, autoDelete: false });
    await channel.bindQueue(queue, routed, '#');
    await channel.close();
    reader = await new QueueReader(connection, queue).start();

    const proxied = await proxyUrl(infraEnv().amqpUrl, 'amqp', 'RabbitMQ');
    proxy = proxied.proxy;
    app = await createMessagingApp({
      schema: db,
      transport: rabbitTransport(proxied.url),
      ...ordersWriter(routed),
      messaging: {
        relay: { mode: 'logical', batchSize: BATCH, retryInitialDelayMs: 50, retryMaxDelayMs: 200 },
      },
    });
  }, 120_000);

  afterAll(async () => {
    await reader?.stop();
    await proxy?.heal();
    await app?.close();
    await proxy?.close();
    await rabbit.cleanup();
    await db?.drop();
    await cluster?.destroy();
  });

  // claim: C-91
  it('stops reading at batchSize × 10 entries while nothing is confirmed, and sends everything once the broker is back', async () => {
    const relay = app.get(LogicalRelay);
    const orders = app.get(OrdersService);
    await waitUntil('the relay reads the slot', async () => relay.status().state === 'reading');
    await orders.place('customer-first', 1, 0);
    await reader.waitFor(1, 60_000); // the link works before it is cut

    await proxy.refuse();
    proxy.cutAll();
    let most = 0;
    const sample = setInterval(() => (most = Math.max(most, relay.status().retained ?? 0)), 10);
    try {
      for (let seq = 1; seq <= ORDERS; seq++) await orders.place(`customer-${seq % 5}`, seq, seq);
      // It read up to the limit and stays there: the rest waits in the slot, not in the relay's memory.
      await waitUntil('the relay holds what it may', async () => (relay.status().retained ?? 0) >= LIMIT);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const held = relay.status();
      expect(held.state).toBe('reading');
      expect(held.retained).toBeGreaterThanOrEqual(LIMIT);
      // One transaction (two entries) may cross the limit: the pause is decided after each commit.
      expect(most).toBeLessThanOrEqual(LIMIT + 1);
      expect(held.unconfirmed).toBeLessThan(ORDERS);
      const slot = await relay.slotState();
      expect(slot?.lagBytes).toBeGreaterThan(0); // nothing past the first unsent message was confirmed
    } finally {
      clearInterval(sample);
    }

    await proxy.heal();
    await reader.waitFor(1 + ORDERS, 120_000);
    const messages = await reader.settle();
    const ids = messages.map((m) => m.properties.messageId as string);
    expect(new Set(ids).size).toBe(1 + ORDERS); // nothing lost
    // Copies beyond one: at most what it held plus the two batches on the wire when the link was cut.
    expect(ids.length - (1 + ORDERS)).toBeLessThanOrEqual(LIMIT + 2 * BATCH);
    await waitUntil('the slot confirms everything', async () => {
      const slot = await relay.slotState();
      return slot?.lagBytes !== undefined && slot.lagBytes < 1_024;
    });
  });
});
