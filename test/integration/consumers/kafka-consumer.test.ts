import { MessagingMetrics, newMessageId } from 'nest-reliable-messaging';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { EACH_DATABASE, TestDialect } from '../../harness/test-database';
import { committedTotal } from '../support/kafka-wire';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage, withBody, withHeaders } from '../support/raw-messages';
import { TopicReader } from '../support/topic-reader';
import { useKafkaSuite } from '../support/suite-resources';

/** A Kafka suite with helpers to start a consumer app on a fresh topic and group and read what it handled. */
function kafkaConsumerSuite(dialect: TestDialect) {
  const suite = useKafkaSuite('kafka_consumer', dialect);
  const { topics, apps } = suite;

  /** A consumer app on a fresh topic and group. */
  async function consumerApp(topic: string, group: string, probe = new ConsumerProbe()) {
    const app = await createMessagingApp({
      schema: suite.schema,
      transport: kafkaTransport(),
      entities: [HandledOrder],
      providers: [{ provide: ConsumerProbe, useValue: probe }, ordersConsumer(orderPlaced(topic), group)],
      messaging: { relay: { enabled: false }, consumers: { concurrency: 3 } },
    });
    apps.push(app);
    return { app, probe };
  }

  async function fresh(prefix: string) {
    const topic = await topics.create(uniqueName(prefix), 3);
    const group = uniqueName(`${prefix}_g`);
    topics.track(`${topic}.${group}.dlq`);
    return { topic, group };
  }

  async function handled(group: string): Promise<HandledOrder[]> {
    return suite.schema.query<HandledOrder>(
      'select id, message_id as "messageId", customer, seq, attempt from handled_orders where consumer_group = $1 order by id',
      [group],
    );
  }

  return Object.assign(suite, { consumerApp, fresh, handled });
}

/** The inbox in the handler's transaction, on each database. */
describe.each(EACH_DATABASE)('Kafka consumer with the inbox (%s)', (_, dialect) => {
  const { kafka, raw, consumerApp, fresh, handled } = kafkaConsumerSuite(dialect);

  // claim: C-38, C-89
  it('applies a message published three times once, and commits all three', async () => {
    const { topic, group } = await fresh('dup3');
    const { probe } = await consumerApp(topic, group);
    const message = orderMessage(topic, { customer: 'alice', seq: 1 });
    await raw.send([message, message, message]);

    await eventually(async () => expect(await committedTotal(kafka, group, topic)).toBe(3));
    expect(await handled(group)).toHaveLength(1);
    expect(probe.invocations).toBe(1);
  });

  // claim: C-42
  it('lets only one of two concurrent deliveries of one message run its handler', async () => {
    const { topic, group } = await fresh('race');
    const probe = new ConsumerProbe();
    probe.delayMs = 400;
    await consumerApp(topic, group, probe);
    const id = newMessageId();
    await raw.send([orderMessage(topic, { customer: 'carol', seq: 1 }, id)], 0);
    await raw.send([orderMessage(topic, { customer: 'carol', seq: 1 }, id)], 1);

    await eventually(async () => expect(await committedTotal(kafka, group, topic)).toBe(2));
    expect(await handled(group)).toHaveLength(1);
    // Runs, not rows: a second run would write no second row (its transaction rolls back) but counts here.
    expect(probe.invocations).toBe(1);
  });

  // claim: C-42
  it('lets only one of two consumer instances that get one message side by side run its handler', async () => {
    const { topic, group } = await fresh('race2');
    const first = new ConsumerProbe();
    const second = new ConsumerProbe();
    first.delayMs = 400;
    second.delayMs = 400;
    await consumerApp(topic, group, first);
    await consumerApp(topic, group, second);
    // Both instances own partitions of the three before the copies go out.
    const admin = kafka.admin();
    await admin.connect();
    try {
      await eventually(async () => {
        const { groups } = await admin.describeGroups([group]);
        expect(groups[0].state).toBe('Stable');
        expect(groups[0].members).toHaveLength(2);
      }, 60_000);
    } finally {
      await admin.disconnect();
    }
    const id = newMessageId();
    const copy = orderMessage(topic, { customer: 'erin', seq: 1 }, id);
    // One copy on each partition, at once: two of them are owned by different instances.
    await Promise.all([0, 1, 2].map((partition) => raw.send([copy], partition)));

    await eventually(async () => expect(await committedTotal(kafka, group, topic)).toBe(3), 60_000);
    expect(await handled(group)).toHaveLength(1);
    expect(first.invocations + second.invocations).toBe(1);
  });

  // claim: C-43
  it('dead-letters a different message that reuses a handled message id, as ID_CONFLICT', async () => {
    const { topic, group } = await fresh('idconflict');
    await consumerApp(topic, group);
    const id = newMessageId();
    const first = orderMessage(topic, { customer: 'dan', seq: 1 }, id);
    const impostor = orderMessage(topic, { customer: 'dan', seq: 2, amount: 99 }, id);
    await raw.send([first, impostor, orderMessage(topic, { customer: 'dan', seq: 3 })], 0);

    await eventually(async () => expect(await committedTotal(kafka, group, topic)).toBe(3));
    expect((await handled(group)).map((h) => h.seq)).toEqual([1, 3]);
    const dlq = await new TopicReader(`${topic}.${group}.dlq`, kafka).start();
    const [parked] = await dlq.waitFor(1);
    await dlq.stop();
    expect(parked.headers['msg.id']).toBe(id);
    expect(parked.headers['msg.failure-code']).toBe('ID_CONFLICT');
    expect(parked.headers['msg.failure-category']).toBe('VALIDATION');
    expect(JSON.parse(parked.value)).toMatchObject({ seq: 2, amount: 99 });
  });
});

/** What does not depend on the database: bad messages, rebalancing (PostgreSQL only, for CI time). */
describe('Kafka consumer: bad messages and rebalancing', () => {
  const { kafka, raw, consumerApp, fresh, handled } = kafkaConsumerSuite('postgres');

  // claim: C-44, C-101
  it('dead-letters malformed messages, settles a type it has no handler for, and handles every good one around them, in order per key', async () => {
    const { topic, group } = await fresh('garbage');
    const { app } = await consumerApp(topic, group);
    const good = (seq: number) => orderMessage(topic, { customer: 'bob', seq });
    const bad = [
      withBody(good(100), '{not json'),
      withHeaders(good(101), { 'msg.id': undefined }),
      withHeaders(good(102), { 'msg.type': 'OrderCancelled' }),
      withBody(good(103), JSON.stringify({ orderId: 'x', customer: '' })),
      withHeaders(good(104), { 'msg.envelope-version': '99' }),
    ];
    await raw.send([
      good(1),
      bad[0],
      good(2),
      bad[1],
      good(3),
      bad[2],
      good(4),
      bad[3],
      good(5),
      bad[4],
      good(6),
    ]);

    await eventually(async () => expect(await committedTotal(kafka, group, topic)).toBe(11));
    expect((await handled(group)).map((h) => h.seq)).toEqual([1, 2, 3, 4, 5, 6]);

    const dlq = await new TopicReader(`${topic}.${group}.dlq`, kafka).start();
    const parked = await dlq.waitFor(4);
    expect(await dlq.settle()).toHaveLength(4);
    await dlq.stop();
    const categories = parked.map(
      (r) => `${r.headers['msg.failure-category']}/${r.headers['msg.failure-code']}`,
    );
    expect(categories).toEqual([
      'DESERIALIZATION/INVALID_JSON',
      'DESERIALIZATION/MISSING_MESSAGE_ID',
      'VALIDATION/SCHEMA_MISMATCH',
      'DESERIALIZATION/UNSUPPORTED_ENVELOPE_VERSION',
    ]);
    const text = await app.get(MessagingMetrics).metrics();
    expect(text).toMatch(/messaging_consumer_unhandled_total\{[^}]*type="OrderCancelled"\} 1/);
    for (const record of parked) {
      expect(record.headers['msg.origin-destination']).toBe(topic);
      expect(record.headers['msg.retry-attempt']).toBe('1');
      expect(record.key).toMatch(/^hmac:[0-9a-f]{32}$/);
    }
    expect(parked[0].value).toBe('{not json');
  });

  it('neither loses nor double-applies work when a second consumer joins (rebalance)', async () => {
    const { topic, group } = await fresh('rebalance');
    await raw.send(
      Array.from({ length: 450 }, (_, i) => orderMessage(topic, { customer: `c${i % 7}`, seq: i })),
    );
    const first = new ConsumerProbe();
    // Slow enough that the first consumer is still at work when the second one has joined (batches are fast).
    first.delayMs = 50;
    await consumerApp(topic, group, first);
    await eventually(() => first.invocations > 10);
    const second = new ConsumerProbe();
    second.delayMs = 20;
    await consumerApp(topic, group, second);

    await eventually(async () => expect(await committedTotal(kafka, group, topic)).toBe(450), 60_000);
    const rows = await handled(group);
    expect(new Set(rows.map((r) => r.messageId)).size).toBe(450);
    expect(rows).toHaveLength(450);
    expect(second.invocations).toBeGreaterThan(0);
    // Deliveries beyond 450 are redeliveries after the rebalance that the inbox absorbed.
    console.log(`rebalance: first ${first.invocations}, second ${second.invocations} handler invocations`);
    for (const customer of ['c0', 'c3', 'c6']) {
      const seqs = rows.filter((r) => r.customer === customer).map((r) => r.seq as number);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }
  });
});
