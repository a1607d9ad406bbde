import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  ConsumerOptions,
  FailureCategory,
  MessageHandlingError,
  MessagingConfigurationError,
  PermanentError,
  RetryLaterError,
  RetryMode,
  RetryPolicyOptions,
} from 'nest-reliable-messaging';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { EACH_DATABASE, postgresOnly } from '../../harness/test-database';
import { depthOf } from '../redrive/support/parked-messages';
import { rabbitTransport } from '../support/messaging-app';
import { startOrdersConsumer } from '../support/orders-consumer-app';
import { ConsumerProbe, handledOrders } from '../support/orders-consumer.fixture';
import { orderMessage, withBody, withHeaders } from '../support/raw-messages';
import { drainQueue, publishRaw } from '../support/rabbit-wire';
import { countRefusedCopies } from '../support/refused-copies';
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

  async function start(
    prefix: string,
    policy: RetryPolicyOptions | undefined,
    probe = new ConsumerProbe(),
    names = { destination: uniqueName(prefix), group: uniqueName('g') },
    retryDefault?: RetryPolicyOptions,
    consumers: ConsumerOptions = {},
  ) {
    const { destination, group } = names;
    rabbit.trackConsumer(destination, group); // its exchange, queue, retry tiers and DLQ
    const app = await startOrdersConsumer(suite, {
      transport: rabbitTransport(),
      destination,
      group,
      policy,
      probe,
      messaging: {
        consumers: { concurrency: 1, ...consumers },
        retryDefaults: retryDefault && { [destination]: retryDefault },
      },
    });
    return { destination, group, probe, app };
  }

  const handled = (group: string) => handledOrders(suite.schema, group);
  const depth = async (queue: string) => depthOf(await rabbit.connect(), queue);
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

    // One retry queue per tier of the TTL ladder (the largest delay and its halvings down to 100 ms), each
    // with its own fixed TTL dead-lettering back to the work queue.
    const { stdout } = await run('rabbitmqctl', ['list_queues', 'name', 'arguments', '-q']);
    const tiers = stdout.split('\n').filter((line) => line.startsWith(`${destination}.${group}.retry.`));
    expect(tiers).toHaveLength(4);
    for (const tier of [100, 200, 400, 800]) {
      const line = tiers.find((l) => l.startsWith(`${destination}.${group}.retry.${tier}ms`)) ?? '';
      expect(line).toContain(`{"x-message-ttl",${tier}}`);
      expect(line).toContain(`{"x-dead-letter-routing-key","${destination}.${group}"}`);
    }
  });

  // claim: C-47
  it('BROKER_DELAYED: keeps full jitter, so retries do not all wait the first tier', async () => {
    const MESSAGES = 40;
    const probe = new ConsumerProbe();
    const failedAt = new Map<string, number>();
    const waited: number[] = [];
    probe.onInvocation = ({ messageId, attempt }) => {
      if (attempt === 1) failedAt.set(messageId, Date.now());
      else waited.push(Date.now() - failedAt.get(messageId)!);
    };
    for (let seq = 1; seq <= MESSAGES; seq++) probe.failUntilAttempt.set(seq, 2);
    const backoff = { initialDelayMs: 2_000, multiplier: 2, maxDelayMs: 2_000 };
    const { destination } = await start(
      'jitter',
      { maxAttempts: 2, mode: RetryMode.BROKER_DELAYED, backoff },
      probe,
    );
    const messages = Array.from({ length: MESSAGES }, (_, i) =>
      orderMessage(destination, { customer: `c${i}`, seq: i + 1 }),
    );
    await publishRaw(await rabbit.connect(), messages);

    await eventually(() => expect(waited).toHaveLength(MESSAGES), 30_000);
    // The first retry waits a uniform draw from [0, 2000] ms. With a TTL rounded up to the smallest tier
    // (2000 ms) none could come back within 1000 ms, however fast the machine; about half do.
    const early = waited.filter((ms) => ms < 1_000).length;
    console.log(`[rabbitmq-retry] first retries after ${[...waited].sort((a, b) => a - b).join(', ')} ms`);
    expect(early).toBeGreaterThanOrEqual(MESSAGES / 5);
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
      // Message 3 waits behind 2 in its key's lane, and goes on once 2's copy is confirmed and 2 acked.
      await eventually(async () => expect((await handled(group)).map((r) => r.seq)).toEqual([1, 3]));
      await eventually(async () => expect(await depth(`${destination}.${group}`)).toBe(0));
      const [parked] = await drainQueue(await rabbit.connect(), dlq);
      const headers = parked.properties.headers ?? {};
      expect(headers['msg.failure-category']).toBe('TRANSIENT');
      expect(String(headers['msg.retry-attempt'])).toBe('3');
      expect(headers['msg.origin-destination']).toBe(destination);
      expect(headers['msg.retry-due-at']).toBeUndefined();
      expect(JSON.parse(parked.content.toString())).toMatchObject({ seq: 2 });
    },
  );

  // claim: C-51
  it('REJECT: nacks a non-retryable failure without requeue: dropped, no copy, never delivered again', async () => {
    const probe = new ConsumerProbe();
    probe.refuse.add(1);
    const policy = { maxAttempts: 3, mode: RetryMode.INLINE, onNonRetryable: 'REJECT' as const };
    const { destination, group } = await start('reject', policy, probe);
    await publishRaw(await rabbit.connect(), three(destination));

    // 2 and 3 wait behind 1 in its key's lane: once they are handled, 1 was settled.
    await eventually(async () => expect((await handled(group)).map((r) => r.seq)).toEqual([2, 3]));
    const { stdout } = await run('rabbitmqctl', [
      'list_queues',
      'name',
      'messages_ready',
      'messages_unacknowledged',
      '-q',
      '--no-table-headers',
    ]);
    const queues = Object.fromEntries(
      stdout
        .split('\n')
        .map((line) => line.trim().split(/\s+/))
        .filter(([name]) => name?.startsWith(`${destination}.${group}`))
        .map(([name, ready, unacked]) => [name, `${ready}/${unacked}`]),
    );
    expect(queues[`${destination}.${group}`]).toBe('0/0'); // not requeued, not left unacked
    expect(queues[`${destination}.${group}.dlq`]).toBe('0/0'); // no copy
    expect(probe.contexts.filter((c) => c.attempt === 1).map((c) => c.redelivered)).toEqual([
      false,
      false,
      false,
    ]);
    expect(probe.invocations).toBe(3);
  });

  it.each([
    ['BROKER_DELAYED', RetryMode.BROKER_DELAYED],
    ['INLINE', RetryMode.INLINE],
  ] as const)(
    'dead-letters a PermanentError on its first failure (%s), while a VALIDATION MessageHandlingError is retried',
    async (_name, mode) => {
      const probe = new ConsumerProbe();
      probe.failWith.set(1, () => new PermanentError('POST_TITLE_MISSING'));
      probe.failWith.set(2, (attempt) =>
        attempt < 3 ? new MessageHandlingError(FailureCategory.VALIDATION, 'POST_TITLE_MISSING') : undefined,
      );
      const { destination, group } = await start('permanent', { maxAttempts: 4, mode, backoff: FAST }, probe);
      await publishRaw(await rabbit.connect(), three(destination));

      const dlq = `${destination}.${group}.dlq`;
      await eventually(async () => expect(await depth(dlq)).toBe(1));
      await eventually(async () => expect((await handled(group)).map((r) => r.seq).sort()).toEqual([2, 3]));
      const [parked] = await drainQueue(await rabbit.connect(), dlq);
      expect(parked.properties.headers).toMatchObject({
        'msg.failure-category': 'VALIDATION',
        'msg.failure-code': 'POST_TITLE_MISSING',
      });
      expect(String(parked.properties.headers?.['msg.retry-attempt'])).toBe('1');
      expect(probe.seqs.filter((seq) => seq === 1)).toHaveLength(1); // one handler run, then the DLQ
      expect(probe.seqs.filter((seq) => seq === 2)).toHaveLength(3);
    },
  );

  // claim: C-46
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

  // claim: C-44
  it('leaves the source unacked while the DLQ refuses the copy (nothing lost), then settles', async () => {
    const probe = new ConsumerProbe();
    probe.alwaysFail.add(1);
    const { destination, group, app } = await start('dlqfail', undefined, probe);
    const refusals = countRefusedCopies(app);
    const workQueue = `${destination}.${group}`;
    const dlq = `${workQueue}.dlq`;
    const connection = await rabbit.connect();
    const admin = await connection.createChannel();
    await admin.deleteQueue(dlq);
    // A DLQ that takes nothing: the broker nacks every copy.
    await admin.assertQueue(dlq, {
      durable: true,
      arguments: { 'x-max-length': 0, 'x-overflow': 'reject-publish' },
    });
    await publishRaw(connection, three(destination));

    // The copy was refused, and refused again after a backoff; 2 and 3 wait behind 1 in its key's lane.
    await eventually(() => refusals.count >= 2);
    expect(await depth(dlq)).toBe(0);
    expect(await handled(group)).toEqual([]);

    // The consumer stops while the copy is still refused: message 1 was never acked, so the broker has all
    // three again (a source acked before its copy was confirmed would be gone).
    await app.close();
    apps.splice(apps.indexOf(app), 1);
    expect(await depth(workQueue)).toBe(3);

    await admin.deleteQueue(dlq);
    await admin.assertQueue(dlq, { durable: true });
    await start('dlqfail', undefined, probe, { destination, group });
    await eventually(async () => expect(await depth(dlq)).toBe(1), 30_000);
    await eventually(async () => expect((await handled(group)).map((r) => r.seq)).toEqual([2, 3]));
    await admin.close();
  });

  it("parks a message no handler can take in the DLQ under a BROKER_DELAYED default, and goes on with its key (unhandledTypes: 'dead-letter')", async () => {
    const probe = new ConsumerProbe();
    const names = { destination: uniqueName('deflt'), group: uniqueName('g') };
    const fallback = { maxAttempts: 3, mode: RetryMode.BROKER_DELAYED, backoff: FAST };
    const inline = { maxAttempts: 3, mode: RetryMode.INLINE, backoff: FAST };
    const { destination, group } = await start('deflt', inline, probe, names, fallback, {
      unhandledTypes: 'dead-letter',
    });
    const [first, second] = three(destination);
    await publishRaw(await rabbit.connect(), [withHeaders(first, { 'msg.type': 'OrderShipped' }), second]);

    const dlq = `${destination}.${group}.dlq`;
    await eventually(async () => expect(await depth(dlq)).toBe(1));
    await eventually(async () => expect((await handled(group)).map((r) => r.seq)).toEqual([2]));
    const [parked] = await drainQueue(await rabbit.connect(), dlq);
    expect(parked.properties.headers?.['msg.failure-code']).toBe('UNKNOWN_TYPE');
  });

  it('refuses at startup a retry default RabbitMQ cannot honour, naming the destination', async () => {
    const names = { destination: uniqueName('baddefault'), group: uniqueName('g') };
    const inline = { maxAttempts: 3, mode: RetryMode.INLINE };
    const error = await start('baddefault', inline, new ConsumerProbe(), names, {
      maxAttempts: 3,
      mode: RetryMode.PAUSE_PARTITION,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MessagingConfigurationError);
    expect((error as Error).message).toContain(`retryDefaults['${names.destination}']`);
    expect((error as Error).message).toMatch(/PAUSE_PARTITION/);
  });

  it.each([RetryMode.INLINE, RetryMode.BROKER_DELAYED])(
    '%s: ignores failure headers a producer put on a message of the destination itself',
    async (mode) => {
      const probe = new ConsumerProbe();
      probe.alwaysFail.add(1);
      const { destination, group } = await start('forged', { maxAttempts: 3, mode, backoff: FAST }, probe);
      const sentAt = Date.now();
      const forged = { 'msg.retry-attempt': '99', 'msg.first-failure-at': '2000-01-01T00:00:00.000Z' };
      const [first, second] = three(destination);
      await publishRaw(await rabbit.connect(), [withHeaders(first, forged), second]);

      const dlq = `${destination}.${group}.dlq`;
      await eventually(async () => expect(await depth(dlq)).toBe(1));
      const [parked] = await drainQueue(await rabbit.connect(), dlq);
      // Its three attempts, not one; the second message is handled after the dead-letter copy is confirmed.
      await eventually(async () => expect(probe.invocations).toBe(3 + 1));
      expect(String(parked.properties.headers?.['msg.retry-attempt'])).toBe('3');
      const firstFailure = String(parked.properties.headers?.['msg.first-failure-at']);
      expect(Date.parse(firstFailure)).toBeGreaterThanOrEqual(sentAt - 1_000);
    },
  );

  // claim: C-18
  it('refuses at startup a policy RabbitMQ cannot honour, naming the class and method', async () => {
    const error = await start('nopause', { maxAttempts: 3, mode: RetryMode.PAUSE_PARTITION }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MessagingConfigurationError);
    expect((error as Error).message).toMatch(/OrdersConsumer\.onOrderPlaced.*PAUSE_PARTITION/s);
  });

  describe("a handler's own retry delay (RetryLaterError, an HTTP 503's Retry-After)", () => {
    /** 50 ms doubling to 5 s over 8 attempts: the policy's longest delay is 3.2 s, its first under 50 ms. */
    const SLOW_CEILING = { initialDelayMs: 50, multiplier: 2, maxDelayMs: 5_000 };

    it.each([
      ['BROKER_DELAYED', RetryMode.BROKER_DELAYED],
      ['INLINE', RetryMode.INLINE],
    ])(
      '%s: the next attempt comes no sooner than the RetryLaterError asked, far later than the backoff',
      async (_, mode) => {
        const probe = new ConsumerProbe();
        probe.failWith.set(1, (attempt) => (attempt === 1 ? new RetryLaterError(1_500) : undefined));
        const { destination, group } = await start(
          'later',
          { maxAttempts: 8, mode, backoff: SLOW_CEILING },
          probe,
        );
        await publishRaw(await rabbit.connect(), three(destination));

        await eventually(async () => expect(await handled(group)).toHaveLength(3));
        expect(probe.attemptsOf(1)).toEqual([1, 2]);
        expect(probe.gapAfterAttempt(1, 1)).toBeGreaterThanOrEqual(1_450); // 1.5 s asked (a timer may fire a ms early)
        expect(await depth(`${destination}.${group}.dlq`)).toBe(0);
      },
    );

    it("honours a fetch Response's 503 Retry-After (ky, ofetch), as an HTTP date too", async () => {
      const probe = new ConsumerProbe();
      const unavailable = (retryAfter: string) =>
        Object.assign(new Error('Service Unavailable'), {
          name: 'HTTPError',
          response: new Response(null, { status: 503, headers: { 'Retry-After': retryAfter } }),
        });
      probe.failWith.set(1, (attempt) => (attempt === 1 ? unavailable('2') : undefined));
      probe.failWith.set(2, (attempt) =>
        attempt === 1 ? unavailable(new Date(Date.now() + 3_000).toUTCString()) : undefined,
      );
      const policy = { maxAttempts: 8, mode: RetryMode.BROKER_DELAYED, backoff: SLOW_CEILING };
      const { destination, group } = await start('later503', policy, probe);
      await publishRaw(await rabbit.connect(), three(destination));

      await eventually(async () => expect(await handled(group)).toHaveLength(3));
      expect(probe.gapAfterAttempt(1, 1)).toBeGreaterThanOrEqual(1_950);
      // An HTTP date has whole seconds: at least two of the three seconds asked are left when it is read.
      expect(probe.gapAfterAttempt(2, 1)).toBeGreaterThanOrEqual(1_950);
    });
  });
});
