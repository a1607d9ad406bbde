import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Logger } from '@nestjs/common';
import * as amqp from 'amqplib';
import {
  MessagingTopologyMismatchError,
  RabbitQueueType,
  RetryMode,
  RetryPolicyOptions,
} from 'nest-reliable-messaging';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { infraEnv } from '../../harness/infra';
import { startOrdersConsumer } from '../support/orders-consumer-app';
import { depthOf } from '../redrive/support/parked-messages';
import { ConsumerProbe, handledOrders } from '../support/orders-consumer.fixture';
import { orderMessage } from '../support/raw-messages';
import { drainQueue, publishRaw } from '../support/rabbit-wire';
import { useRabbitSuite } from '../support/suite-resources';

const run = promisify(execFile);
const FAST = { initialDelayMs: 200, multiplier: 2, maxDelayMs: 800 };

/**
 * Issue 19: work, retry-tier and dead-letter queues declared as quorum queues (`queueType: 'quorum'`) retry
 * and dead-letter as classic ones do. The TTL tiers dead-letter back `at-least-once`, so a retry held by the
 * broker survives a leader change; a queue of the other type stops the service with a clear error.
 */
describe('Quorum queues on RabbitMQ', () => {
  const suite = useRabbitSuite('rabbit_quorum');
  const { rabbit, apps } = suite;

  async function start(
    prefix: string,
    policy: RetryPolicyOptions | undefined,
    probe = new ConsumerProbe(),
    options: {
      queueType?: RabbitQueueType;
      classicFor?: boolean;
      topology?: 'declare' | 'verify';
      destination?: string;
      group?: string;
    } = {},
  ) {
    const destination = options.destination ?? uniqueName(prefix);
    const queueTypes: Record<string, RabbitQueueType> = options.classicFor
      ? { [destination]: 'classic' }
      : {};
    const group = options.group ?? uniqueName('g');
    rabbit.trackConsumer(destination, group);
    const app = await startOrdersConsumer(suite, {
      transport: {
        kind: 'rabbitmq',
        url: infraEnv().amqpUrl,
        queueType: options.queueType ?? 'quorum',
        queueTypes,
      },
      destination,
      group,
      policy,
      probe,
      messaging: { consumers: { concurrency: 1 }, topology: options.topology ?? 'declare' },
    });
    return { destination, group, probe, app };
  }

  const handled = (group: string) => handledOrders(suite.schema, group);
  /** `name → type arguments` of the queues whose name starts with `prefix`, as rabbitmqctl lists them. */
  const queues = async (prefix: string) => {
    const { stdout } = await run('rabbitmqctl', ['list_queues', 'name', 'type', 'arguments', '-q']);
    return stdout
      .split('\n')
      .filter((line) => line.startsWith(prefix))
      .map((line) => line.split('\t'));
  };
  const depth = async (queue: string) => depthOf(await rabbit.connect(), queue);

  // claim: C-54
  test('BROKER_DELAYED: retries through quorum TTL tiers that dead-letter at-least-once, applies once', async () => {
    const probe = new ConsumerProbe();
    probe.failUntilAttempt.set(1, 3);
    const { destination, group } = await start(
      'qdelayed',
      { maxAttempts: 4, mode: RetryMode.BROKER_DELAYED, backoff: FAST },
      probe,
    );
    await publishRaw(
      await rabbit.connect(),
      [1, 2, 3].map((seq) => orderMessage(destination, { customer: 'k', seq })),
    );

    await eventually(async () => expect(await handled(group)).toHaveLength(3));
    expect((await handled(group)).find((r) => r.seq === 1)).toEqual({ seq: 1, attempt: 3 });
    const listed = await queues(`${destination}.${group}`);
    expect(listed).toHaveLength(1 + 4 + 1); // work queue, four tiers, DLQ
    for (const [name, type, args] of listed) {
      expect(`${name} ${type}`).toBe(`${name} quorum`);
      if (name.includes('.retry.')) {
        expect(args).toContain('{"x-dead-letter-strategy","at-least-once"}');
        expect(args).toContain('{"x-overflow","reject-publish"}');
        expect(args).toContain(`{"x-dead-letter-routing-key","${destination}.${group}"}`);
      }
    }
  });

  test.each([RetryMode.BROKER_DELAYED, RetryMode.INLINE])(
    '%s: dead-letters into the quorum DLQ after maxAttempts, with the failure headers',
    async (mode) => {
      const probe = new ConsumerProbe();
      probe.alwaysFail.add(2);
      const { destination, group } = await start('qexhaust', { maxAttempts: 3, mode, backoff: FAST }, probe);
      await publishRaw(
        await rabbit.connect(),
        [1, 2, 3].map((seq) => orderMessage(destination, { customer: 'k', seq })),
      );

      const dlq = `${destination}.${group}.dlq`;
      await eventually(async () => expect(await depth(dlq)).toBe(1), 30_000);
      await eventually(async () => expect((await handled(group)).map((r) => r.seq)).toEqual([1, 3]));
      await eventually(async () => expect(await depth(`${destination}.${group}`)).toBe(0));
      const [parked] = await drainQueue(await rabbit.connect(), dlq);
      expect(String(parked.properties.headers?.['msg.retry-attempt'])).toBe('3');
      expect(JSON.parse(parked.content.toString())).toMatchObject({ seq: 2 });
      expect((await queues(dlq))[0]?.[1]).toBe('quorum');
    },
  );

  // claim: C-56
  test.each(['declare', 'verify'] as const)(
    '%s mode: a classic queue where quorum is configured stops the service, naming the queue',
    async (topology) => {
      const { destination, group, app } = await start('qmismatch', undefined, new ConsumerProbe(), {
        queueType: 'classic',
      });
      await app.close();
      apps.splice(apps.indexOf(app), 1);

      const error = await start('qmismatch', undefined, new ConsumerProbe(), {
        destination,
        group,
        topology,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MessagingTopologyMismatchError);
      expect((error as Error).message).toContain(`queue '${destination}.${group}' (expected quorum)`);
      expect((error as Error).message).toMatch(/x-queue-type/);
      expect((await queues(`${destination}.${group}`))[0]?.[1]).toBe('classic'); // left as it was
    },
  );

  test.each([false, true])(
    'verify mode accepts queues of the configured type (per-destination classic: %s)',
    async (classicFor) => {
      const { destination, group, app } = await start('qverify', undefined, new ConsumerProbe(), {
        classicFor,
      });
      await app.close();
      apps.splice(apps.indexOf(app), 1);
      const expected = classicFor ? 'classic' : 'quorum';
      expect((await queues(`${destination}.${group}`)).map(([, type]) => type)).toEqual([expected, expected]);
      const again = await start('qverify', undefined, new ConsumerProbe(), {
        destination,
        group,
        classicFor,
        topology: 'verify',
      });
      expect(again.app).toBeDefined();
    },
  );

  /**
   * Issue 26, defect 4. RabbitMQ 4.x gives every quorum queue a delivery limit of 20 and drops a message
   * returned more often; every closed channel returns all its unacked messages (up to the prefetch), so the
   * neighbours of a message that crashes its consumer go with it. This broker (3.10) has no default limit
   * but honours one set by a policy: the suite sets 20 that way, as 4.x would.
   */
  describe('delivery limit', () => {
    /** Consumes `queue` like a consumer that crashes before acking: take the messages, close the channel. */
    const crashLoop = async (queue: string, rounds: number) => {
      const connection = await rabbit.connect();
      let returned = 0;
      for (; returned < rounds; returned++) {
        const channel = await connection.createChannel();
        await channel.prefetch(10);
        const got: amqp.ConsumeMessage[] = [];
        await channel.consume(queue, (m) => m && got.push(m), { noAck: false });
        const depth = await eventually(async () => {
          const { messageCount } = await channel.checkQueue(queue);
          return got.length > 0 || messageCount === 0 ? got.length : false;
        });
        await channel.close(); // the crash: every unacked message goes back
        if (depth === 0) break;
      }
      return returned;
    };
    const policy = async (queue: string, set: boolean) => {
      const name = `test-4x-default-${queue}`;
      const args = set
        ? [
            'set_policy',
            name,
            `^${queue.replace(/\./g, '\\.')}$`,
            '{"delivery-limit":20}',
            '--apply-to',
            'queues',
          ]
        : ['clear_policy', name];
      await run('rabbitmqctl', args);
    };

    // claim: C-14, C-55
    test("dead-letters a message returned more than 20 times into the group's DLQ with its neighbours, none dropped", async () => {
      const { destination, group, app } = await start('qlimit', undefined);
      await app.close(); // no consumer of the library's: the crash loop below is the only one
      apps.splice(apps.indexOf(app), 1);
      const workQueue = `${destination}.${group}`;
      const dlq = `${workQueue}.dlq`;
      await policy(workQueue, true);
      try {
        const sent = [1, 2, 3].map((seq) => orderMessage(destination, { customer: 'k', seq }));
        await publishRaw(await rabbit.connect(), sent);
        await eventually(async () => expect(await depth(workQueue)).toBe(3));

        const returns = await crashLoop(workQueue, 30);
        expect(returns).toBe(21); // the 21st return passes the limit
        await eventually(async () => expect(await depth(dlq)).toBe(3));
        expect(await depth(workQueue)).toBe(0);
        const parked = await drainQueue(await rabbit.connect(), dlq);
        expect(parked.map((m) => String(m.properties.headers?.['msg.id'])).sort()).toEqual(
          sent.map((m) => m.headers['msg.id']).sort(),
        );
        const [death] = parked[0].properties.headers?.['x-death'] ?? [];
        expect(death).toMatchObject({ queue: workQueue, reason: 'delivery_limit' });
      } finally {
        await policy(workQueue, false);
      }
    });

    // claim: C-54
    test.each(['declare', 'verify'] as const)(
      '%s mode: a quorum queue declared before the limit keeps working, and startup says which policy protects it',
      async (topology) => {
        const destination = uniqueName('qlegacy');
        const group = uniqueName('g');
        const workQueue = `${destination}.${group}`;
        rabbit.trackConsumer(destination, group);
        // As an earlier version declared them: the type alone.
        const channel = await (await rabbit.connect()).createChannel();
        await channel.assertExchange(destination, 'topic', { durable: true });
        for (const queue of [workQueue, `${workQueue}.dlq`]) {
          await channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
        }
        await channel.bindQueue(workQueue, destination, '#');
        await channel.close();
        const warn = jest.spyOn(Logger.prototype, 'warn');

        await start('qlegacy', undefined, new ConsumerProbe(), { destination, group, topology });
        const warnings = warn.mock.calls.map(([message]) => String(message));
        warn.mockRestore();
        expect(warnings.find((w) => w.includes(`Quorum queue '${workQueue}'`))).toContain(
          `rabbitmqctl set_policy 'messaging-${workQueue}'`,
        );
        expect(warnings.find((w) => w.includes(`Quorum queue '${workQueue}.dlq'`))).toContain(
          '"delivery-limit":1000000',
        );
        await publishRaw(await rabbit.connect(), [orderMessage(destination, { customer: 'k', seq: 1 })]);
        await eventually(async () => expect(await handled(group)).toHaveLength(1));
      },
    );
  });
});
