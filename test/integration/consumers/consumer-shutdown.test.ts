import { TestingModule } from '@nestjs/testing';
import { InboxRetention } from 'nest-reliable-messaging/testing';
import { eventually } from '../../harness/eventually';
import { KafkaTopics, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { RabbitFixture } from '../../harness/rabbitmq';
import { createTestDatabase, EACH_DATABASE } from '../../harness/test-database';
import { committedTotal, RawKafkaProducer } from '../support/kafka-wire';
import { createMessagingApp, kafkaTransport, rabbitTransport } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage } from '../support/raw-messages';
import { publishRaw } from '../support/rabbit-wire';

describe('Consumer shutdown and inbox retention', () => {
  const kafka = testKafka();
  const topics = new KafkaTopics(kafka);
  const rabbit = new RabbitFixture();
  let schema: TestSchema;

  beforeAll(async () => {
    schema = await createTestSchema('consumer_shutdown');
  });

  afterAll(async () => {
    await topics.cleanup();
    await rabbit.cleanup();
    await schema.drop();
  });

  const handled = (group: string) =>
    schema.query<{ seq: number }>('select seq from handled_orders where consumer_group = $1 order by id', [
      group,
    ]);

  async function app(
    transport: 'kafka' | 'rabbitmq',
    destination: string,
    group: string,
    probe: ConsumerProbe,
  ) {
    return createMessagingApp({
      schema: schema.name,
      transport: transport === 'kafka' ? kafkaTransport() : rabbitTransport(),
      entities: [HandledOrder],
      providers: [
        { provide: ConsumerProbe, useValue: probe },
        ordersConsumer(orderPlaced(destination), group),
      ],
      messaging: { relay: { enabled: false }, consumers: { concurrency: 1 } },
    });
  }

  // claim: C-34
  it.each(['kafka', 'rabbitmq'] as const)(
    'finishes the in-flight handler and settles it on close; the rest waits for the next consumer (%s)',
    async (transport) => {
      const destination = uniqueName(`stop_${transport}`);
      const group = uniqueName('g');
      if (transport === 'kafka') {
        await topics.create(destination, 1);
        topics.track(`${destination}.${group}.dlq`);
      } else {
        rabbit.track({
          exchanges: [destination],
          queues: [`${destination}.${group}`, `${destination}.${group}.dlq`],
        });
      }
      const slow = new ConsumerProbe();
      slow.delayMs = 800;
      const first: TestingModule = await app(transport, destination, group, slow);
      const messages = [1, 2, 3, 4, 5].map((seq) => orderMessage(destination, { customer: 'k', seq }));
      if (transport === 'kafka') {
        const raw = new RawKafkaProducer(kafka);
        await raw.send(messages);
        await raw.stop();
      } else {
        await publishRaw(await rabbit.connect(), messages);
      }
      await eventually(() => slow.invocations >= 1);
      await first.close();

      // The handler that was running when close() began has finished and committed.
      const afterClose = (await handled(group)).map((r) => r.seq);
      expect(afterClose.length).toBeGreaterThanOrEqual(1);
      expect(afterClose).toEqual([1, 2, 3, 4, 5].slice(0, afterClose.length));
      if (transport === 'kafka')
        expect(await committedTotal(kafka, group, destination)).toBe(afterClose.length);

      const second = await app(transport, destination, group, new ConsumerProbe());
      await eventually(async () => expect((await handled(group)).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]));
      await second.close();
    },
  );

  // claim: C-35
  it.each(EACH_DATABASE)(
    'deletes inbox records older than the retention, and keeps the others (%s)',
    async (_, dialect) => {
      const db = await createTestDatabase(dialect, 'inbox_retention');
      const retentionApp = await createMessagingApp({
        schema: db,
        transport: kafkaTransport(),
        messaging: { relay: { enabled: false }, consumers: { inboxRetentionMs: 86_400_000 } },
      });
      try {
        await db.query(
          dialect === 'postgres'
            ? `insert into messaging_inbox (consumer_group, message_id, type, payload_hash, handled_at)
               select 'retention', gen_random_uuid(), 'T', repeat('0', 64), now() - (i || ' hours')::interval
               from generate_series(1, 48) as i`
            : `insert into messaging_inbox (consumer_group, message_id, type, payload_hash, handled_at)
               with recursive s (i) as (select 1 union all select i + 1 from s where i < 48)
               select 'retention', uuid(), 'T', repeat('0', 64), utc_timestamp(6) - interval i hour from s`,
        );
        const deleted = await retentionApp.get(InboxRetention).purge();
        const [{ n }] = await db.query<{ n: string | number }>(
          "select count(*) as n from messaging_inbox where consumer_group = 'retention'",
        );
        expect(deleted).toBe(25);
        expect(Number(n)).toBe(23);
      } finally {
        await retentionApp.close();
        await db.drop();
      }
    },
  );
});
