import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { MessagingConfigurationError, RetryMode, RetryPolicyOptions } from 'nest-reliable-messaging';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { EACH_DATABASE, postgresOnly } from '../../harness/test-database';
import { createMessagingApp, rabbitTransport } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage, withBody } from '../support/raw-messages';
import { drainQueue, publishRaw } from '../support/rabbit-wire';
import { useRabbitSuite } from '../support/suite-resources';

const run = promisify(execFile);
const FAST = { initialDelayMs: 200, multiplier: 2, maxDelayMs: 800 };

/**
 * On each database: a retry rolls back the failed attempt's writes with its inbox record, so the message
 * applies once; exhausted, it is dead-lettered.
 */
describe.each(EACH_DATABASE)('Retry policies on RabbitMQ (%s)', (_, dialect) => {
  const suite = useRabbitSuite('rabbit_retry', dialect);
  // `test`: on every database. `it`: on PostgreSQL only, for what touches nothing database-specific (CI time).
  const it = postgresOnly(dialect);
  const { rabbit, apps } = suite;

  async function start(prefix: string, policy: RetryPolicyOptions | undefined, probe = new ConsumerProbe()) {
    const destination = uniqueName(prefix);
    const group = uniqueName('g');
    rabbit.track({
      exchanges: [destination],
      queues: [
        `${destination}.${group}`,
        `${destination}.${group}.dlq`,
        ...[200, 400, 800].map((tier) => `${destination}.${group}.retry.${tier}ms`),
      ],
    });
    const app = await createMessagingApp({
      schema: suite.schema,
      transport: rabbitTransport(),
      entities: [HandledOrder],
      providers: [
        { provide: ConsumerProbe, useValue: probe },
        ordersConsumer(orderPlaced(destination), group, policy),
      ],
      messaging: { relay: { enabled: false }, consumers: { concurrency: 1 } },
    });
    apps.push(app);
    return { destination, group, probe };
  }

  const handled = (group: string) =>
    suite.schema.query<{ seq: number; attempt: number }>(
      'select seq, attempt from handled_orders where consumer_group = $1 order by id',
      [group],
    );
  const depth = async (queue: string) => {
    const channel = await (await rabbit.connect()).createChannel();
    try {
      return (await channel.checkQueue(queue)).messageCount;
    } finally {
      await channel.close();
    }
  };
  const three = (destination: string) =>
    [1, 2, 3].map((seq) => orderMessage(destination, { customer: 'k', seq }));

  test('BROKER_DELAYED: retries through one TTL queue per delay tier, applies once at attempt k+1', async () => {
    const probe = new ConsumerProbe();
    probe.failUntilAttempt.set(1, 3);
    const { destination, group } = await start(
      'delayed',
      { maxAttempts: 4, mode: RetryMode.BROKER_DELAYED, backoff: FAST },
      probe,
    );
    await publishRaw(await rabbit.connect(), three(destination));

    await eventually(async () => expect(await handled(group)).toHaveLength(3));
    expect((await handled(group)).find((r) => r.seq === 1)).toEqual({ seq: 1, attempt: 3 });

    // One retry queue per tier, each with its own fixed TTL dead-lettering back to the work queue.
    const { stdout } = await run('rabbitmqctl', ['list_queues', 'name', 'arguments', '-q']);
    const tiers = stdout.split('\n').filter((line) => line.startsWith(`${destination}.${group}.retry.`));
    expect(tiers).toHaveLength(3);
    for (const tier of [200, 400, 800]) {
      const line = tiers.find((l) => l.startsWith(`${destination}.${group}.retry.${tier}ms`)) ?? '';
      expect(line).toContain(`{"x-message-ttl",${tier}}`);
      expect(line).toContain(`{"x-dead-letter-routing-key","${destination}.${group}"}`);
    }
  });

  it('INLINE: retries within the delivery, in order', async () => {
    const probe = new ConsumerProbe();
    probe.failUntilAttempt.set(2, 3);
    const { destination, group } = await start(
      'inline',
      { maxAttempts: 3, mode: RetryMode.INLINE, backoff: FAST },
      probe,
    );
    await publishRaw(await rabbit.connect(), three(destination));

    await eventually(async () =>
      expect((await handled(group)).map((r) => `${r.seq}@${r.attempt}`)).toEqual(['1@1', '2@3', '3@1']),
    );
  });

  test.each([RetryMode.BROKER_DELAYED, RetryMode.INLINE])(
    '%s: dead-letters after maxAttempts with the failure headers; the source is acked after the DLQ confirm',
    async (mode) => {
      const probe = new ConsumerProbe();
      probe.alwaysFail.add(2);
      const { destination, group } = await start('exhaust', { maxAttempts: 3, mode, backoff: FAST }, probe);
      await publishRaw(await rabbit.connect(), three(destination));

      const dlq = `${destination}.${group}.dlq`;
      await eventually(async () => expect(await depth(dlq)).toBe(1), 30_000);
      await eventually(async () => expect(await depth(`${destination}.${group}`)).toBe(0));
      expect((await handled(group)).map((r) => r.seq)).toEqual([1, 3]);
      const [parked] = await drainQueue(await rabbit.connect(), dlq);
      const headers = parked.properties.headers ?? {};
      expect(headers['msg.failure-category']).toBe('TRANSIENT');
      expect(String(headers['msg.retry-attempt'])).toBe('3');
      expect(headers['msg.origin-destination']).toBe(destination);
      expect(headers['msg.retry-due-at']).toBeUndefined();
      expect(JSON.parse(parked.content.toString())).toMatchObject({ seq: 2 });
    },
  );

  it('dead-letters a DESERIALIZATION failure on its first delivery', async () => {
    const probe = new ConsumerProbe();
    const { destination, group } = await start(
      'deser',
      { maxAttempts: 5, mode: RetryMode.BROKER_DELAYED, backoff: FAST },
      probe,
    );
    const [first] = three(destination);
    await publishRaw(await rabbit.connect(), [withBody(first, '\u0000binary')]);

    const dlq = `${destination}.${group}.dlq`;
    await eventually(async () => expect(await depth(dlq)).toBe(1));
    const [parked] = await drainQueue(await rabbit.connect(), dlq);
    expect(parked.properties.headers?.['msg.failure-category']).toBe('DESERIALIZATION');
    expect(String(parked.properties.headers?.['msg.retry-attempt'])).toBe('1');
    expect(probe.invocations).toBe(0);
  });

  it('leaves the source unacked while the DLQ refuses the copy (nothing lost), then settles', async () => {
    const probe = new ConsumerProbe();
    probe.alwaysFail.add(1);
    const { destination, group } = await start('dlqfail', undefined, probe);
    const dlq = `${destination}.${group}.dlq`;
    const connection = await rabbit.connect();
    const admin = await connection.createChannel();
    await admin.deleteQueue(dlq);
    // A DLQ that takes nothing: the broker nacks every copy.
    await admin.assertQueue(dlq, {
      durable: true,
      arguments: { 'x-max-length': 0, 'x-overflow': 'reject-publish' },
    });
    await publishRaw(connection, three(destination));

    await eventually(() => probe.invocations >= 1);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const work = await admin.checkQueue(`${destination}.${group}`);
    // Message 1 is held unacked by the consumer (not in the ready count), 2 and 3 wait behind it in its lane.
    expect(work.consumerCount).toBe(1);
    expect(await depth(dlq)).toBe(0);
    expect(await handled(group)).toEqual([]);

    await admin.deleteQueue(dlq);
    await admin.assertQueue(dlq, { durable: true });
    await eventually(async () => expect(await depth(dlq)).toBe(1), 30_000);
    await eventually(async () => expect((await handled(group)).map((r) => r.seq)).toEqual([2, 3]));
    await admin.close();
  });

  it('refuses at startup a policy RabbitMQ cannot honour, naming the class and method', async () => {
    const error = await start('nopause', { maxAttempts: 3, mode: RetryMode.PAUSE_PARTITION }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MessagingConfigurationError);
    expect((error as Error).message).toMatch(/OrdersConsumer\.onOrderPlaced.*PAUSE_PARTITION/s);
  });
});
