import { MessagingMetrics } from 'nest-reliable-messaging';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { forceCloseRabbitConnections } from '../../harness/rabbitmq';
import { createMessagingApp, rabbitTransport } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage, withBody, withHeaders } from '../support/raw-messages';
import { drainQueue, publishRaw } from '../support/rabbit-wire';
import { useRabbitSuite } from '../support/suite-resources';

describe('RabbitMQ consumer with the inbox', () => {
  const suite = useRabbitSuite('rabbit_consumer');
  const { rabbit, apps } = suite;

  async function consumerApp(
    destination: string,
    group: string,
    probe = new ConsumerProbe(),
    serviceName = 'test-service',
  ) {
    rabbit.track({
      exchanges: [destination],
      queues: [`${destination}.${group}`, `${destination}.${group}.dlq`],
    });
    const app = await createMessagingApp({
      schema: suite.schema.name,
      transport: rabbitTransport(),
      entities: [HandledOrder],
      providers: [
        { provide: ConsumerProbe, useValue: probe },
        ordersConsumer(orderPlaced(destination), group),
      ],
      messaging: { serviceName, relay: { enabled: false }, consumers: { concurrency: 3 } },
    });
    apps.push(app);
    return { app, probe };
  }

  async function handled(group: string): Promise<HandledOrder[]> {
    return suite.schema.query<HandledOrder>(
      'select message_id as "messageId", customer, seq, attempt from handled_orders where consumer_group = $1 order by id',
      [group],
    );
  }

  async function queueDepth(queue: string): Promise<{ messageCount: number; consumerCount: number }> {
    const channel = await (await rabbit.connect()).createChannel();
    try {
      return await channel.checkQueue(queue);
    } finally {
      await channel.close();
    }
  }

  // claim: C-38, C-89
  it('declares its topology and applies a message delivered three times once', async () => {
    const destination = uniqueName('r_dup3');
    const group = uniqueName('g');
    const { probe } = await consumerApp(destination, group);
    const message = orderMessage(destination, { customer: 'alice', seq: 1 });
    await publishRaw(await rabbit.connect(), [message, message, message]);

    await eventually(async () => expect(await handled(group)).toHaveLength(1));
    await eventually(async () => expect((await queueDepth(`${destination}.${group}`)).messageCount).toBe(0));
    expect(probe.invocations).toBe(1);
  });

  // claim: C-101
  it('dead-letters malformed messages, settles a type it has no handler for, and handles every good one, in order per key', async () => {
    const destination = uniqueName('r_garbage');
    const group = uniqueName('g');
    const { app } = await consumerApp(destination, group);
    const good = (seq: number) => orderMessage(destination, { customer: 'bob', seq });
    await publishRaw(await rabbit.connect(), [
      good(1),
      withBody(good(100), 'not json at all'),
      good(2),
      withHeaders(good(101), { 'msg.id': undefined }),
      good(3),
      withHeaders(good(102), { 'msg.type': 'OrderCancelled' }),
      good(4),
      withBody(good(103), JSON.stringify({ orderId: 'x' })),
      good(5),
    ]);

    await eventually(async () => expect((await handled(group)).map((h) => h.seq)).toEqual([1, 2, 3, 4, 5]));
    const dlq = `${destination}.${group}.dlq`;
    await eventually(async () => expect((await queueDepth(dlq)).messageCount).toBe(3));
    await eventually(async () => expect((await queueDepth(`${destination}.${group}`)).messageCount).toBe(0));
    const parked = await drainQueue(await rabbit.connect(), dlq);
    expect(
      parked.map(
        (m) =>
          `${String(m.properties.headers?.['msg.failure-category'])}/${String(m.properties.headers?.['msg.failure-code'])}`,
      ),
    ).toEqual([
      'DESERIALIZATION/INVALID_JSON',
      'DESERIALIZATION/MISSING_MESSAGE_ID',
      'VALIDATION/SCHEMA_MISMATCH',
    ]);
    expect(parked[0].content.toString()).toBe('not json at all');
    const text = await app.get(MessagingMetrics).metrics();
    expect(text).toMatch(/messaging_consumer_unhandled_total\{[^}]*type="OrderCancelled"\} 1/);
    expect(String(parked[0].properties.headers?.['msg.key'])).toMatch(/^hmac:[0-9a-f]{32}$/);
  });

  // claim: C-42
  it('applies two concurrent deliveries of one message once', async () => {
    const destination = uniqueName('r_race');
    const group = uniqueName('g');
    const probe = new ConsumerProbe();
    probe.delayMs = 400;
    const { app } = await consumerApp(destination, group, probe);
    const message = orderMessage(destination, { customer: 'k1', seq: 1 });
    // The same message under two keys: the consumer runs them side by side.
    await publishRaw(await rabbit.connect(), [message, { ...message, key: 'k2' }]);
    const outcomes = async () => {
      const text = await app.get(MessagingMetrics).metrics();
      return [...text.matchAll(/^messaging_consumer_messages_total\{[^}]*outcome="(\w+)"[^}]*\} (\d+)$/gm)]
        .map(([, outcome, count]) => `${outcome} ${count}`)
        .sort();
    };
    await eventually(async () => expect(await outcomes()).toEqual(['duplicate 1', 'handled 1']));
    expect(await handled(group)).toHaveLength(1);
  });

  it('survives a dropped connection: re-subscribes, loses nothing, applies nothing twice', async () => {
    const destination = uniqueName('r_drop');
    const group = uniqueName('g');
    const probe = new ConsumerProbe();
    probe.delayMs = 10;
    const serviceName = uniqueName('dropper');
    await consumerApp(destination, group, probe, serviceName);
    const messages = Array.from({ length: 200 }, (_, i) =>
      orderMessage(destination, { customer: `c${i % 5}`, seq: i }),
    );
    await publishRaw(await rabbit.connect(), messages);
    await eventually(() => probe.invocations > 20);

    // The broker closes the consumer's connection, as a broker restart or an operator would.
    expect(await forceCloseRabbitConnections(serviceName)).toBe(1);

    await eventually(
      async () => expect(new Set((await handled(group)).map((h) => h.messageId)).size).toBe(200),
      60_000,
    );
    await eventually(async () => expect((await queueDepth(`${destination}.${group}`)).messageCount).toBe(0));
    const rows = await handled(group);
    expect(rows).toHaveLength(200);
    for (const customer of ['c0', 'c1', 'c4']) {
      const seqs = rows.filter((r) => r.customer === customer).map((r) => r.seq as number);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }
  });
});
