import * as path from 'node:path';
import { RetryMode, RetryOrdering, RetryPolicyOptions } from 'nest-reliable-messaging';
import { eventually } from '../../harness/eventually';
import { KafkaTopics, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { RabbitFixture } from '../../harness/rabbitmq';
import { FixtureProcess } from '../support/child-process';
import { RawKafkaProducer } from '../support/kafka-wire';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { HandledOrder } from '../support/orders-consumer.fixture';
import { orderMessage } from '../support/raw-messages';
import { drainQueue, publishRaw } from '../support/rabbit-wire';
import { TopicReader } from '../support/topic-reader';

const SCRIPT = path.resolve(__dirname, '../support/consumer-process.ts');
/** Long, fixed waits between attempts (the process draws the longest jitter): room to kill it in one. */
const SLOW = { initialDelayMs: 4_000, multiplier: 1, maxDelayMs: 4_000 };

const CASES: Array<[string, 'kafka' | 'rabbitmq', RetryPolicyOptions]> = [
  ['Kafka, PAUSE_PARTITION', 'kafka', { maxAttempts: 3, mode: RetryMode.PAUSE_PARTITION, backoff: SLOW }],
  [
    'Kafka, INLINE',
    'kafka',
    { maxAttempts: 3, mode: RetryMode.INLINE, ordering: RetryOrdering.ALLOW_REORDER, backoff: SLOW },
  ],
  ['RabbitMQ, INLINE', 'rabbitmq', { maxAttempts: 3, mode: RetryMode.INLINE, backoff: SLOW }],
];

/** The attempts a consumer process logged for a message, in order. */
function attemptsOf(process: FixtureProcess, messageId: string): number[] {
  return [...process.log.matchAll(new RegExp(`^ATTEMPT ${messageId} (\\d+)$`, 'gm'))].map((m) =>
    Number(m[1]),
  );
}

/** maxAttempts holds across restarts: the count of a message retried in place is persisted, not kept in memory. */
describe.each(CASES)(
  'Attempts of a message retried in place survive a killed consumer (%s)',
  (_, transport, policy) => {
    let schema: TestSchema;
    const topics = new KafkaTopics();
    const rabbit = new RabbitFixture();
    const processes: FixtureProcess[] = [];

    beforeAll(async () => {
      schema = await createTestSchema(`attempts_${transport}`);
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

    it('runs the remaining attempts only, then dead-letters the message at maxAttempts', async () => {
      const destination = uniqueName(`attempts_${transport}`);
      const group = uniqueName('g');
      const env = {
        SCHEMA: schema.name,
        DESTINATION: destination,
        GROUP: group,
        TRANSPORT: transport,
        POLICY: JSON.stringify(policy),
        ALWAYS_FAIL: '1',
        JITTER: 'max',
      };
      const message = orderMessage(destination, { customer: 'k', seq: 1 });
      const id = message.headers['msg.id'];
      if (transport === 'kafka') {
        await topics.create(destination, 1);
        topics.trackPrefix(`${destination}.${group}.`);
      } else {
        rabbit.track({ exchanges: [destination], queues: [`${destination}.${group}`] });
        rabbit.trackQueuePrefix(`${destination}.${group}.`);
      }

      const first = new FixtureProcess(SCRIPT, env);
      processes.push(first);
      await first.start();
      if (transport === 'kafka') {
        const raw = new RawKafkaProducer(testKafka());
        await raw.send([message]);
        await raw.stop();
      } else {
        await publishRaw(await rabbit.connect(), [message]);
      }
      // Two attempts failed (and are recorded); the third is 4 s away: kill the consumer now.
      const recorded = async () =>
        (
          await schema.query<{ failed_attempts: number }>(
            'select failed_attempts from messaging_attempts where consumer_group = $1 and message_id = $2',
            [group, id],
          )
        )[0]?.failed_attempts;
      await eventually(async () => expect(await recorded()).toBe(2), 60_000);
      expect(attemptsOf(first, id)).toEqual([1, 2]);
      await first.kill();

      const second = new FixtureProcess(SCRIPT, env);
      processes.push(second);
      await second.start();
      const dlq = `${destination}.${group}.dlq`;
      let parkedAttempt: string;
      if (transport === 'kafka') {
        const reader = await new TopicReader(dlq).start();
        const [parked] = await reader.waitFor(1, 90_000);
        await reader.stop();
        parkedAttempt = parked.headers['msg.retry-attempt'];
      } else {
        const parked = await eventually(async () => {
          const got = await drainQueue(await rabbit.connect(), dlq);
          expect(got).toHaveLength(1);
          return got[0];
        }, 60_000);
        parkedAttempt = String(parked.properties.headers?.['msg.retry-attempt']);
      }
      expect(attemptsOf(second, id)).toEqual([3]);
      expect(parkedAttempt).toBe('3');
    });
  },
);
