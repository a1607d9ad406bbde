import { RetryMode, RetryPolicyOptions } from 'nest-reliable-messaging';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { EACH_DATABASE, TestDialect } from '../../harness/test-database';
import { committedTotal } from '../support/kafka-wire';
import { createMessagingApp, kafkaTransport, rabbitTransport } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage } from '../support/raw-messages';
import { drainQueue, publishRaw } from '../support/rabbit-wire';
import { TopicReader } from '../support/topic-reader';
import { useKafkaSuite, useRabbitSuite } from '../support/suite-resources';

/** Retried in place, fast: the failing message's own decision, inside the batch's lane. */
const INLINE: RetryPolicyOptions = {
  maxAttempts: 3,
  mode: RetryMode.INLINE,
  backoff: { initialDelayMs: 50, multiplier: 1, maxDelayMs: 50 },
};

/** Six messages of one key (one lane, in order); the third one fails. */
const SIX = [1, 2, 3, 4, 5, 6];

/** A broker as these tests need it: start a consumer on fresh names, publish, and see what was settled. */
interface BatchBroker {
  /** Starts a consumer of `SIX` (published before it starts, or right after on RabbitMQ) and returns it. */
  consume(policy: RetryPolicyOptions, probe: ConsumerProbe): Promise<{ group: string; destination: string }>;
  /** Resolves once every one of the six is settled (offsets committed / queue empty and nothing unacked). */
  allSettled(names: { group: string; destination: string }): Promise<void>;
  /** The dead-lettered copies' `seq`s. */
  deadLettered(names: { group: string; destination: string }, count: number): Promise<number[]>;
}

function kafkaBroker(
  dialect: TestDialect,
): BatchBroker & { schema: () => ReturnType<typeof useKafkaSuite>['schema'] } {
  const suite = useKafkaSuite('mid_batch_kafka', dialect);
  return {
    schema: () => suite.schema,
    async consume(policy, probe) {
      // One partition and every message there before the consumer starts: one fetch, one batch.
      const destination = await suite.topics.create(uniqueName('midbatch'), 1);
      const group = uniqueName('midbatch_g');
      suite.topics.trackPrefix(`${destination}.${group}.`);
      await suite.raw.send(SIX.map((seq) => orderMessage(destination, { customer: 'k', seq })));
      suite.apps.push(await consumerApp(suite.schema, kafkaTransport(), destination, group, policy, probe));
      return { group, destination };
    },
    async allSettled({ group, destination }) {
      await eventually(async () => expect(await committedTotal(suite.kafka, group, destination)).toBe(6));
    },
    async deadLettered({ group, destination }, count) {
      const reader = await new TopicReader(`${destination}.${group}.dlq`, suite.kafka).start();
      const parked = await reader.waitFor(count);
      await reader.stop();
      return parked.map((record) => (JSON.parse(record.value) as { seq: number }).seq);
    },
  };
}

function rabbitBroker(
  dialect: TestDialect,
): BatchBroker & { schema: () => ReturnType<typeof useRabbitSuite>['schema'] } {
  const suite = useRabbitSuite('mid_batch_rabbit', dialect);
  const running = new Map<string, Awaited<ReturnType<typeof consumerApp>>>();
  const depth = async (queue: string) => {
    const channel = await (await suite.rabbit.connect()).createChannel();
    try {
      return (await channel.checkQueue(queue)).messageCount;
    } finally {
      await channel.close();
    }
  };
  return {
    schema: () => suite.schema,
    async consume(policy, probe) {
      const destination = uniqueName('midbatch');
      const group = uniqueName('g');
      suite.rabbit.track({ exchanges: [destination], queues: [`${destination}.${group}`] });
      suite.rabbit.trackQueuePrefix(`${destination}.${group}.`);
      // The first message's handler is slow, so the other five arrive meanwhile and go as one batch.
      probe.onInvocation = () => {
        probe.delayMs = probe.invocations === 1 ? 300 : 0;
      };
      const app = await consumerApp(suite.schema, rabbitTransport(), destination, group, policy, probe);
      running.set(group, app);
      suite.apps.push(app);
      await publishRaw(
        await suite.rabbit.connect(),
        SIX.map((seq) => orderMessage(destination, { customer: 'k', seq })),
      );
      return { group, destination };
    },
    async allSettled({ group, destination }) {
      // Closing the consumer returns what it has not acked to the queue: nothing may come back.
      const app = running.get(group);
      running.delete(group);
      suite.apps.splice(suite.apps.indexOf(app as never), 1);
      await app?.close();
      expect(await depth(`${destination}.${group}`)).toBe(0);
    },
    async deadLettered({ group, destination }, count) {
      let parked: Array<{ content: Buffer }> = [];
      await eventually(async () => {
        parked = [
          ...parked,
          ...(await drainQueue(await suite.rabbit.connect(), `${destination}.${group}.dlq`)),
        ];
        expect(parked).toHaveLength(count);
      });
      return parked.map((message) => (JSON.parse(message.content.toString()) as { seq: number }).seq);
    },
  };
}

async function consumerApp(
  schema: Parameters<typeof createMessagingApp>[0]['schema'],
  transport: Parameters<typeof createMessagingApp>[0]['transport'],
  destination: string,
  group: string,
  policy: RetryPolicyOptions,
  probe: ConsumerProbe,
) {
  return createMessagingApp({
    schema,
    transport,
    entities: [HandledOrder],
    providers: [
      { provide: ConsumerProbe, useValue: probe },
      ordersConsumer(orderPlaced(destination), group, policy),
    ],
    messaging: { relay: { enabled: false }, consumers: { concurrency: 1 } },
  });
}

/**
 * A failure in the middle of a batch (one transaction): the batch rolls back, the failing message takes its
 * own policy's path; the others commit exactly once; offsets / acks cover all.
 */
describe.each(EACH_DATABASE)('A failure in the middle of a consumer batch (%s)', (_, dialect) => {
  describe.each([
    ['Kafka', kafkaBroker],
    ['RabbitMQ', rabbitBroker],
  ] as const)('on %s', (_broker, make) => {
    const broker = make(dialect);
    const handled = (group: string) =>
      broker
        .schema()
        .query<{ seq: number; attempt: number }>(
          'select seq, attempt from handled_orders where consumer_group = $1 order by id',
          [group],
        );
    const handledAll = async (group: string, count: number) =>
      eventually(async () => expect(await handled(group)).toHaveLength(count));

    // claim: C-40
    test('retries the failing message in place, alone: the others are applied once, in order', async () => {
      const probe = new ConsumerProbe();
      probe.failUntilAttempt.set(3, 2); // writes, then fails, on its first attempt only
      const names = await broker.consume(INLINE, probe);

      await handledAll(names.group, 6);
      await broker.allSettled(names);
      expect(await handled(names.group)).toEqual([
        { seq: 1, attempt: 1 },
        { seq: 2, attempt: 1 },
        { seq: 3, attempt: 2 },
        { seq: 4, attempt: 1 },
        { seq: 5, attempt: 1 },
        { seq: 6, attempt: 1 },
      ]);
      // The failing one: its failed try and its retry. The ones before it in its batch ran again after the
      // rollback (applied once, above); the ones after it once, in a batch of their own: seq 4 and 5 in one
      // transaction.
      expect(probe.attemptsOf(3)).toEqual([1, 2]);
      for (const seq of [4, 5, 6]) expect(probe.attemptsOf(seq)).toEqual([1]);
      expect(probe.contextsOf(4)[0].manager === probe.contextsOf(5)[0].manager).toBe(true);
    });

    test('dead-letters a message refused in the middle of a batch: the others are applied once', async () => {
      const probe = new ConsumerProbe();
      probe.refuse.add(3);
      const names = await broker.consume(INLINE, probe);

      await handledAll(names.group, 5);
      await broker.allSettled(names);
      expect((await handled(names.group)).map((h) => h.seq)).toEqual([1, 2, 4, 5, 6]);
      expect(await broker.deadLettered(names, 1)).toEqual([3]);
      expect(probe.attemptsOf(3)).toEqual([1]);
      for (const seq of [4, 5, 6]) expect(probe.attemptsOf(seq)).toEqual([1]);
    });
  });
});
