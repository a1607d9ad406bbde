import * as path from 'node:path';
import { eventually } from '../../harness/eventually';
import { KafkaTopics, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { RabbitFixture } from '../../harness/rabbitmq';
import { FixtureProcess } from '../support/child-process';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { HandledOrder } from '../support/orders-consumer.fixture';
import { orderMessage } from '../support/raw-messages';
import { RawKafkaProducer } from '../support/kafka-wire';
import { publishRaw } from '../support/rabbit-wire';

const SCRIPT = path.resolve(__dirname, '../support/consumer-process.ts');

/** The consumer killed mid-batch (SIGKILL) and restarted: every message applied exactly once in effect. */
describe.each(['kafka', 'rabbitmq'] as const)('A consumer killed mid-batch (%s)', (transport) => {
  let schema: TestSchema;
  const topics = new KafkaTopics();
  const rabbit = new RabbitFixture();
  const processes: FixtureProcess[] = [];

  beforeAll(async () => {
    schema = await createTestSchema(`kill_${transport}`);
    // The handled_orders table: created once by an app with synchronize, before the processes start.
    const app = await createMessagingApp({
      schema: schema.name,
      transport: kafkaTransport(),
      entities: [HandledOrder],
      messaging: { relay: { enabled: false } },
    });
    await app.close();
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await topics.cleanup();
    await rabbit.cleanup();
    await schema.drop();
  });

  it('applies every message exactly once after a SIGKILL and a restart', async () => {
    const destination = uniqueName(`kill_${transport}`);
    const group = uniqueName('g');
    const env = {
      SCHEMA: schema.name,
      DESTINATION: destination,
      GROUP: group,
      TRANSPORT: transport,
      DELAY_MS: '30',
    };
    const messages = Array.from({ length: 300 }, (_, i) =>
      orderMessage(destination, { customer: `c${i % 6}`, seq: i }),
    );

    if (transport === 'kafka') {
      await topics.create(destination, 3);
      topics.track(`${destination}.${group}.dlq`);
    } else {
      rabbit.track({
        exchanges: [destination],
        queues: [`${destination}.${group}`, `${destination}.${group}.dlq`],
      });
    }
    const first = new FixtureProcess(SCRIPT, env);
    processes.push(first);
    await first.start();
    if (transport === 'kafka') {
      const raw = new RawKafkaProducer(testKafka());
      await raw.send(messages);
      await raw.stop();
    } else {
      await publishRaw(await rabbit.connect(), messages);
    }

    const count = async () =>
      (
        await schema.query<{ n: string }>(
          'select count(*) as n from handled_orders where consumer_group = $1',
          [group],
        )
      )[0].n;
    await eventually(async () => Number(await count()) >= 60, 60_000).catch((error: unknown) => {
      throw new Error(`${String(error)}\nconsumer log:\n${first.log.slice(-3000)}`);
    });
    await first.kill();
    const atKill = Number(await count());

    const second = new FixtureProcess(SCRIPT, env);
    processes.push(second);
    await second.start();
    await eventually(async () => expect(Number(await count())).toBe(300), 120_000);

    const rows = await schema.query<{ message_id: string; customer: string; seq: number }>(
      'select message_id, customer, seq from handled_orders where consumer_group = $1 order by id',
      [group],
    );
    expect(new Set(rows.map((r) => r.message_id)).size).toBe(300);
    for (const customer of ['c0', 'c5']) {
      const seqs = rows.filter((r) => r.customer === customer).map((r) => r.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }
    console.log(`${transport}: killed after ${atKill} handled; all 300 handled once after the restart`);
  });
});
