import { TestingModule } from '@nestjs/testing';
import * as amqp from 'amqplib';
import { OutboxService, TransactionHost } from 'nest-reliable-messaging';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { forceCloseRabbitConnections, RabbitFixture } from '../../harness/rabbitmq';
import { createMessagingApp, rabbitTransport } from '../support/messaging-app';
import { orderPlaced, OrdersService, ordersWriter } from '../support/orders.fixture';
import { readOutboxRows, waitUntil } from '../support/outbox-rows';
import { bindQueue, QueueReader } from '../support/queue-reader';

/**
 * The relay over RabbitMQ: publisher confirms with `mandatory`. A message no queue receives comes back as
 * unroutable: a failed publish that keeps its row, not a success that loses it.
 */
describe('Outbox relay over RabbitMQ (publisher confirms, mandatory)', () => {
  const rabbit = new RabbitFixture();
  const routed = uniqueName('orders_routed');
  // Our own service name: RabbitMQ shows it on our connection, so that a test can close just that one.
  const serviceName = uniqueName('outbox_rabbit_relay');
  let schema: TestSchema;
  let connection: amqp.ChannelModel;
  let app: TestingModule;
  const readers: QueueReader[] = [];

  /** A queue bound to `exchange` with '#', and a reader on it. */
  const subscribe = async (exchange: string): Promise<QueueReader> => {
    const queue = uniqueName(`${exchange}_q`);
    rabbit.track({ exchanges: [exchange], queues: [queue] });
    await bindQueue(connection, exchange, queue);
    const reader = await new QueueReader(connection, queue).start();
    readers.push(reader);
    return reader;
  };

  /** The reader of a queue bound to `routed`, subscribed on first use. */
  let routedReader: QueueReader | undefined;
  const routedQueue = async () => (routedReader ??= await subscribe(routed));

  beforeAll(async () => {
    schema = await createTestSchema('outbox_rabbit');
    connection = await rabbit.connect();
    app = await createMessagingApp({
      schema: schema.name,
      transport: rabbitTransport(),
      ...ordersWriter(routed),
      // A slow safety poll: retries must come from the relay's own backoff timer.
      messaging: {
        serviceName,
        relay: { pollIntervalMs: 60_000, retryInitialDelayMs: 100, retryMaxDelayMs: 500 },
      },
    });
  });

  afterAll(async () => {
    for (const reader of readers) await reader.stop();
    await app?.close();
    await rabbit.cleanup();
    await schema?.drop();
  });

  const rowsOf = async (destination: string) =>
    (await readOutboxRows(schema)).filter((r) => r.destination === destination);

  it('delivers a committed message once, with the envelope in headers and AMQP properties', async () => {
    const reader = await routedQueue();
    const before = reader.messages.length;
    const order = await app.get(OrdersService).place('alice', 42, 1);
    const message = (await reader.waitFor(before + 1))[before];
    // Once the row is marked sent, every copy the relay published is in the queue.
    const [row] = await waitUntil('the row is sent', async () => {
      const rows = (await rowsOf(routed)).filter((r) => r.key === 'alice');
      return rows[0]?.sentAt ? rows : undefined;
    });
    expect(await reader.settle()).toHaveLength(before + 1);
    expect(JSON.parse(message.content.toString())).toEqual({
      orderId: order.id,
      customer: 'alice',
      amount: 42,
      seq: 1,
    });
    expect(message.fields.exchange).toBe(routed);
    expect(message.fields.routingKey).toBe('OrderPlaced');
    expect(message.properties.messageId).toBe(row.messageId);
    expect(message.properties.type).toBe('OrderPlaced');
    expect(message.properties.contentType).toBe('application/json');
    expect(message.properties.deliveryMode).toBe(2);
    const headers = message.properties.headers as Record<string, unknown>;
    expect(headers['msg.id']).toBe(row.messageId);
    expect(headers['msg.type']).toBe('OrderPlaced');
    expect(headers['msg.key']).toBe('alice');
    expect(headers['msg.envelope-version']).toBe('1');
  });

  // claim: C-23
  it('keeps an unroutable message unsent with a clear error, and delivers it once a queue is bound', async () => {
    const unrouted = uniqueName('orders_unrouted');
    rabbit.track({ exchanges: [unrouted] });
    await app
      .get(TransactionHost)
      .run(() =>
        app.get(OutboxService).add(orderPlaced(unrouted), { orderId: 7, customer: 'bob', amount: 7 }),
      );

    // Between attempts the row is free (it is claimed again when its backoff ends, so a read may meet it
    // claimed): wait for a failed, released row.
    // What the row looked like last, for the timeout's message (a CI run once timed out here: was the row
    // never claimed, or did an attempt hang until the publish deadline?).
    let seen: unknown;
    const [failing] = await waitUntil('the row has failed a few times and is released', async () => {
      const rows = await rowsOf(unrouted);
      seen = rows.map(({ attempts, lockedBy, lastError, sentAt }) => ({
        attempts,
        lockedBy,
        lastError,
        sentAt,
      }));
      return rows.length === 1 && rows[0].attempts >= 3 && rows[0].lockedBy === null && rows;
    }).catch((error: Error) => {
      throw new Error(`${error.message}; the row as last read: ${JSON.stringify(seen)}`);
    });
    expect(failing.sentAt).toBeNull();
    expect(failing.lockedBy).toBeNull();
    expect(failing.lastError).toContain('REJECTED: UnroutableMessageError');
    expect(failing.lastError).toContain(`no queue is bound to exchange '${unrouted}'`);
    expect(failing.lastError).toContain("routing key 'OrderPlaced'");

    const reader = await subscribe(unrouted);
    const [message] = await reader.waitFor(1, 10_000);
    expect(message.properties.messageId).toBe(failing.messageId);
    const [sent] = await waitUntil('the row is sent', async () => {
      const rows = await rowsOf(unrouted);
      return rows[0].sentAt !== null && rows;
    });
    expect(await reader.settle()).toHaveLength(1);
    expect(sent.attempts).toBeGreaterThanOrEqual(3);
  });

  it("does not undo the other rows' success when one row of a batch is unroutable", async () => {
    const routedReader = await routedQueue();
    const before = routedReader.messages.length;
    const unrouted = uniqueName('orders_partial');
    rabbit.track({ exchanges: [unrouted] });
    const outbox = app.get(OutboxService);
    // One transaction, so one claim and one publish: two routable messages around an unroutable one.
    await app.get(TransactionHost).run(async () => {
      await outbox.add(orderPlaced(routed), { orderId: 1, customer: 'carol', amount: 1 });
      await outbox.add(orderPlaced(unrouted), { orderId: 2, customer: 'dave', amount: 2 });
      await outbox.add(orderPlaced(routed), { orderId: 3, customer: 'erin', amount: 3 });
    });

    await routedReader.waitFor(before + 2);
    const [failing] = await waitUntil('the unroutable row has failed', async () => {
      const rows = await rowsOf(unrouted);
      return rows[0]?.attempts >= 1 && rows;
    });
    expect(failing.sentAt).toBeNull();
    expect(failing.lastError).toContain('UnroutableMessageError');
    // The failed row is marked as its batch settles; the confirmed ones with the relay's next claim, which
    // may come after: wait for their mark rather than read it at the failure's.
    const okRows = await waitUntil('the routed rows are marked sent', async () => {
      const rows = (await rowsOf(routed)).slice(-2);
      return rows.every((r) => r.sentAt !== null) && rows;
    });
    expect(okRows.map((r) => r.attempts)).toEqual([0, 0]);

    // Its retry comes from the relay's backoff, not from the safety poll a minute away.
    const reader = await subscribe(unrouted);
    const [message] = await reader.waitFor(1, 10_000);
    expect(message.properties.messageId).toBe(failing.messageId);
    await waitUntil('the row is sent', async () => (await rowsOf(unrouted))[0].sentAt !== null);
    expect(routedReader.messages).toHaveLength(before + 2);
  });

  it('publishes again by itself after the broker closed its connection', async () => {
    const routedReader = await routedQueue();
    // A publish first, so that the publisher has a connection and a confirm channel to lose.
    await app.get(OrdersService).place('frank', 0, 0);
    const before = (await routedReader.waitFor(routedReader.messages.length + 1)).length;
    expect(await forceCloseRabbitConnections(serviceName)).toBe(1);

    for (let i = 1; i <= 3; i++) await app.get(OrdersService).place('frank', i, i);
    await routedReader.waitFor(before + 3, 10_000);
    const rows = await waitUntil('every row is sent', async () => {
      const all = await readOutboxRows(schema);
      return all.every((r) => r.sentAt !== null) && all;
    });
    console.log(
      `[outbox-rabbitmq] after a broker-side connection close: failed attempts before the reconnect: ` +
        rows
          .filter((r) => r.key === 'frank')
          .map((r) => r.attempts)
          .join(', '),
    );
    const frank = (await routedReader.settle())
      .slice(before)
      .map((m) => (JSON.parse(m.content.toString()) as { seq: number }).seq);
    expect(frank).toEqual([1, 2, 3]);
  });
});
