import { TestingModule } from '@nestjs/testing';
import * as amqp from 'amqplib';
import { z } from 'zod';
import {
  defineEvent,
  newMessageId,
  OutboxPayloadInvalidError,
  OutboxService,
  TransactionHost,
} from 'nest-reliable-messaging';
import { LogicalRelay } from 'nest-reliable-messaging/testing';
import { uniqueName } from '../../harness/names';
import { PostgresCluster } from '../../harness/postgres-cluster';
import { RabbitFixture } from '../../harness/rabbitmq';
import { createLogicalSchema, LogicalSchema, startLogicalCluster } from '../support/logical-cluster';
import { createMessagingApp, rabbitTransport } from '../support/messaging-app';
import { orderPlaced, OrdersService, ordersWriter } from '../support/orders.fixture';
import { readOutboxRows, waitUntil } from '../support/outbox-rows';
import { QueueReader } from '../support/queue-reader';

const CUSTOMERS = 5;
const ORDERS = 50;

const step = z.object({ customer: z.string(), seq: z.number().int() });
/** Two types of one destination and key: RabbitMQ routes by type, so one can be unbound while the other is bound. */
const stepOf = (destination: string, type: 'StepA' | 'StepB') =>
  defineEvent({ type, destination, schema: step, key: (e) => e.customer });

/**
 * `relay.mode: 'logical'` over RabbitMQ (publisher confirms, mandatory) on a private cluster with
 * `wal_level = logical`: nothing lost, each key in order; a message no queue takes is parked with its key's
 * later ones and goes out in order once a queue is bound; a key's later message confirmed in the batch of an
 * earlier refused one is held back behind it; what the outbox table would refuse is refused by add().
 */
describe('Logical relay (PostgreSQL log → RabbitMQ)', () => {
  const rabbit = new RabbitFixture();
  const readers: QueueReader[] = [];
  let cluster: PostgresCluster;
  let db: LogicalSchema;
  let app: TestingModule;
  let connection: amqp.ChannelModel;
  const routed = uniqueName('orders_logical_rmq');

  /** A queue bound to `exchange` (declared as the library does: a durable topic exchange) for `routingKey`. */
  const subscribe = async (
    exchange: string,
    routingKey = '#',
  ): Promise<QueueReader & { queueName: string }> => {
    const queue = uniqueName(`${exchange}_q`);
    rabbit.track({ exchanges: [exchange], queues: [queue] });
    await bind(exchange, queue, routingKey);
    const reader = await new QueueReader(connection, queue).start();
    readers.push(reader);
    return Object.assign(reader, { queueName: queue });
  };
  const bind = async (exchange: string, queue: string, routingKey: string) => {
    const channel = await connection.createChannel();
    await channel.assertExchange(exchange, 'topic', { durable: true });
    await channel.assertQueue(queue, { durable: false, autoDelete: false });
    await channel.bindQueue(queue, exchange, routingKey);
    await channel.close();
  };

  beforeAll(async () => {
    cluster = await startLogicalCluster('logical-rmq');
    db = await createLogicalSchema(cluster, 'logical_rmq');
    connection = await rabbit.connect();
    app = await createMessagingApp({
      schema: db,
      transport: rabbitTransport(),
      ...ordersWriter(routed),
      messaging: {
        relay: { mode: 'logical', retryInitialDelayMs: 50, retryMaxDelayMs: 200, pollIntervalMs: 1_000 },
      },
    });
  }, 120_000);

  afterAll(async () => {
    for (const reader of readers) await reader.stop();
    await app?.close();
    await rabbit.cleanup();
    await db?.drop();
    await cluster?.destroy();
  });

  const seqOf = (m: amqp.ConsumeMessage) => (JSON.parse(m.content.toString()) as { seq: number }).seq;

  // claim: C-90
  it('publishes every committed message once, in order per key, and confirms the slot', async () => {
    const reader = await subscribe(routed);
    const orders = app.get(OrdersService);
    for (let seq = 1; seq <= ORDERS; seq++) await orders.place(`customer-${seq % CUSTOMERS}`, seq, seq);
    await expect(orders.placeThenFail('customer-rolled-back')).rejects.toThrow('business rule');

    await reader.waitFor(ORDERS);
    const messages = await reader.settle();
    expect(messages).toHaveLength(ORDERS);
    expect(new Set(messages.map((m) => m.properties.messageId as string)).size).toBe(ORDERS);
    for (let c = 0; c < CUSTOMERS; c++) {
      const ofKey = messages
        .filter(
          (m) => (JSON.parse(m.content.toString()) as { customer: string }).customer === `customer-${c}`,
        )
        .map(seqOf);
      expect(ofKey).toEqual([...ofKey].sort((a, b) => a - b));
    }
    expect(await readOutboxRows(db)).toEqual([]);
    await waitUntil('the slot confirms everything', async () => {
      const slot = await app.get(LogicalRelay).slotState();
      return slot?.lagBytes !== undefined && slot.lagBytes < 1_024;
    });
  });

  // claim: C-89
  it('sends both messages of an id given twice to add() (logical mode keeps no index to refuse it)', async () => {
    const reader = await subscribe(routed);
    const orders = app.get(OrdersService);
    const id = newMessageId();
    await orders.placeWithId('customer-twice', 1, id);
    await orders.placeWithId('customer-twice', 1, id);
    await orders.place('customer-after', 1, 1);
    await reader.waitFor(3);
    const messages = await reader.settle();
    // Two keys: the relay keeps each key's order, not the order between keys, so the
    // message of 'customer-after' may come between or before the two copies.
    const twice = messages.filter((m) => m.properties.messageId === id);
    expect(twice).toHaveLength(2);
    expect(twice[1].content.toString()).toBe(twice[0].content.toString());
    expect(messages).toHaveLength(3);
  });

  // claim: C-92
  it('parks an unroutable message with the later ones of its key, lets the slot move on, and sends them in order once a queue is bound', async () => {
    const unrouted = uniqueName('orders_logical_unrouted');
    rabbit.track({ exchanges: [unrouted] });
    const event = orderPlaced(unrouted);
    const outbox = app.get(OutboxService);
    const host = app.get(TransactionHost);
    for (let seq = 1; seq <= 3; seq++)
      await host.run(() => outbox.add(event, { orderId: seq, customer: 'nobody-listens', amount: 1, seq }));

    const parked = await waitUntil(
      'the three messages are parked',
      async () => {
        const rows = (await readOutboxRows(db)).filter((r) => r.destination === unrouted);
        return rows.length === 3 && rows;
      },
      90_000,
    );
    expect(parked[0].lastError).toMatch(/REJECTED: UnroutableMessageError/);
    expect(parked.slice(1).map((r) => r.lastError)).toEqual([
      'behind a parked message of its key',
      'behind a parked message of its key',
    ]);
    await waitUntil('the slot moves past them', async () => {
      const slot = await app.get(LogicalRelay).slotState();
      return slot?.lagBytes !== undefined && slot.lagBytes < 1_024;
    });

    const reader = await subscribe(unrouted);
    await reader.waitFor(3, 60_000);
    await waitUntil('the parked rows are sent', async () =>
      (await readOutboxRows(db)).filter((r) => r.destination === unrouted).every((r) => r.sentAt !== null),
    );
    expect((await reader.settle()).map(seqOf)).toEqual([1, 2, 3]);
  });

  // Defect F2: StreamQueue settled each message alone; B counted as delivered while A, ahead of it, was refused.
  it("holds a key's later message (type B, bound) back behind its earlier one (type A, unbound) refused in the same batch", async () => {
    const destination = uniqueName('steps_logical');
    rabbit.track({ exchanges: [destination] });
    const bound = await subscribe(destination, 'StepB');
    const outbox = app.get(OutboxService);
    await app.get(TransactionHost).run(async () => {
      await outbox.add(stepOf(destination, 'StepA'), { customer: 'k', seq: 1 });
      await outbox.add(stepOf(destination, 'StepB'), { customer: 'k', seq: 2 });
    });

    const parked = await waitUntil(
      'A is parked, and B behind it',
      async () => {
        const rows = (await readOutboxRows(db)).filter((r) => r.destination === destination);
        return rows.length === 2 && rows;
      },
      90_000,
    );
    expect(parked[0].lastError).toMatch(/REJECTED: UnroutableMessageError.*'StepA'/);
    expect(parked[1].lastError).toBe('behind a parked message of its key');
    // Once A can go (the same queue bound for it too), the copies that count are in order: A, then B.
    await bind(destination, bound.queueName, 'StepA');
    await waitUntil(
      'both rows are sent',
      async () =>
        (await readOutboxRows(db))
          .filter((r) => r.destination === destination)
          .every((r) => r.sentAt !== null),
      60_000,
    );
    const seqs = (await bound.settle()).map(seqOf);
    expect(seqs.lastIndexOf(2)).toBeGreaterThan(seqs.indexOf(1));
  });

  // Defect F7: logical mode wrote what the park statement then refused for ever.
  it("refuses in add() what the outbox table would refuse, as poll mode's insert does", async () => {
    const outbox = app.get(OutboxService);
    const write = app
      .get(TransactionHost)
      .run(() => outbox.add(orderPlaced(routed), { orderId: 1, customer: 'nul\u0000char', amount: 1 }));
    await expect(write).rejects.toBeInstanceOf(OutboxPayloadInvalidError);
    await expect(write).rejects.toThrow(/U\+0000/);
  });
});
