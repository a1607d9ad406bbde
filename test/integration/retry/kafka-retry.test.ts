import {
  ConsumerOptions,
  MessagingConfigurationError,
  FailureCategory,
  MessageHandlingError,
  MessagingMetrics,
  PermanentError,
  RetryLaterError,
  RetryMode,
  RetryOrdering,
  RetryPolicyOptions,
} from 'nest-reliable-messaging';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { EACH_DATABASE, postgresOnly } from '../../harness/test-database';
import { committedTotal } from '../support/kafka-wire';
import { kafkaTransport } from '../support/messaging-app';
import { startOrdersConsumer } from '../support/orders-consumer-app';
import { ConsumerProbe, handledOrders } from '../support/orders-consumer.fixture';
import { orderMessage, withBody, withHeaders } from '../support/raw-messages';
import { countRefusedCopies } from '../support/refused-copies';
import { TopicReader } from '../support/topic-reader';
import { useKafkaSuite } from '../support/suite-resources';

const FAST = { initialDelayMs: 100, multiplier: 2, maxDelayMs: 400 };

/**
 * On each database: a retry rolls back the failed attempt's writes with its inbox record, so the message
 * applies once; exhausted, it is dead-lettered.
 */
describe.each(EACH_DATABASE)('Retry policies on Kafka (%s)', (_, dialect) => {
  const suite = useKafkaSuite('kafka_retry', dialect);
  // `test`: on every database. `it`: on PostgreSQL only, for what touches nothing database-specific (CI time).
  const it = postgresOnly(dialect);
  const { kafka, topics, raw } = suite;

  async function start(
    prefix: string,
    policy: RetryPolicyOptions | undefined,
    probe = new ConsumerProbe(),
    retryDefault?: RetryPolicyOptions,
    consumers?: ConsumerOptions,
  ) {
    const topic = await topics.create(uniqueName(prefix), 1);
    const group = uniqueName(`${prefix}_g`);
    topics.trackPrefix(`${topic}.${group}.`); // its dead-letter and retry topics
    const app = await startOrdersConsumer(suite, {
      transport: kafkaTransport(),
      destination: topic,
      group,
      policy,
      probe,
      messaging: { retryDefaults: retryDefault && { [topic]: retryDefault }, consumers },
    });
    return { topic, group, probe, app };
  }

  const handled = (group: string) => handledOrders(suite.schema, group);
  const five = (topic: string) => [1, 2, 3, 4, 5].map((seq) => orderMessage(topic, { customer: 'k', seq }));

  // claim: C-51
  test('PAUSE_PARTITION: retries in place, applies once at attempt k+1, later messages wait (order kept)', async () => {
    const probe = new ConsumerProbe();
    probe.failUntilAttempt.set(1, 3);
    const { topic, group } = await start(
      'pause',
      { maxAttempts: 4, mode: RetryMode.PAUSE_PARTITION, backoff: FAST },
      probe,
    );
    await raw.send(five(topic));

    await eventually(async () => expect(await committedTotal(kafka, group, topic)).toBe(5));
    expect(await handled(group)).toEqual([
      { seq: 1, attempt: 3 },
      { seq: 2, attempt: 1 },
      { seq: 3, attempt: 1 },
      { seq: 4, attempt: 1 },
      { seq: 5, attempt: 1 },
    ]);
    expect(probe.invocations).toBe(3 + 4);
  });

  it('RETRY_DESTINATION with ALLOW_REORDER: retries through retry topics, later messages go ahead', async () => {
    const probe = new ConsumerProbe();
    probe.failUntilAttempt.set(1, 3);
    const policy = {
      maxAttempts: 4,
      mode: RetryMode.RETRY_DESTINATION,
      ordering: RetryOrdering.ALLOW_REORDER,
      backoff: FAST,
    };
    const { topic, group } = await start('retrytopic', policy, probe);
    await raw.send(five(topic));

    await eventually(async () => expect(await handled(group)).toHaveLength(5));
    const rows = await handled(group);
    expect(rows.find((r) => r.seq === 1)).toEqual({ seq: 1, attempt: 3 });
    expect(rows.map((r) => r.seq).slice(0, 4)).toEqual([2, 3, 4, 5]);
    // The source offsets were committed once each retry copy was confirmed.
    expect(await committedTotal(kafka, group, topic)).toBe(5);
  });

  it('RETRY_DESTINATION with PRESERVE on an ordered topic pauses instead (order before republishing)', async () => {
    const probe = new ConsumerProbe();
    probe.failUntilAttempt.set(1, 2);
    const policy = {
      maxAttempts: 3,
      mode: RetryMode.RETRY_DESTINATION,
      ordering: RetryOrdering.PRESERVE,
      backoff: FAST,
    };
    const { topic, group } = await start('preserve', policy, probe);
    await raw.send(five(topic));

    await eventually(async () => expect(await handled(group)).toHaveLength(5));
    expect((await handled(group)).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  test('INLINE (with ALLOW_REORDER; PRESERVE would pause first): retries within the delivery', async () => {
    const probe = new ConsumerProbe();
    probe.failUntilAttempt.set(2, 3);
    const policy = {
      maxAttempts: 3,
      mode: RetryMode.INLINE,
      ordering: RetryOrdering.ALLOW_REORDER,
      backoff: FAST,
    };
    const { topic, group, app } = await start('inline', policy, probe);
    await raw.send(five(topic));

    await eventually(async () => expect(await committedTotal(kafka, group, topic)).toBe(5));
    expect((await handled(group)).map((r) => `${r.seq}@${r.attempt}`)).toEqual([
      '1@1',
      '2@3',
      '3@1',
      '4@1',
      '5@1',
    ]);
    const text = await app.get(MessagingMetrics).metrics();
    expect(text).toMatch(/messaging_consumer_retries_total\{[^}]*mode="inline"[^}]*\} 2/);
  });

  test.each([
    ['PAUSE_PARTITION', RetryMode.PAUSE_PARTITION, RetryOrdering.PRESERVE],
    ['RETRY_DESTINATION', RetryMode.RETRY_DESTINATION, RetryOrdering.ALLOW_REORDER],
    ['INLINE', RetryMode.INLINE, RetryOrdering.ALLOW_REORDER],
  ])(
    '%s: dead-letters after maxAttempts with exactly the failure headers, then goes on',
    async (_, mode, ordering) => {
      const probe = new ConsumerProbe();
      probe.alwaysFail.add(2);
      const { topic, group } = await start(
        'exhaust',
        { maxAttempts: 3, mode, ordering, backoff: FAST },
        probe,
      );
      await raw.send(five(topic));

      await eventually(async () => expect(await committedTotal(kafka, group, topic)).toBe(5));
      expect((await handled(group)).map((r) => r.seq)).toEqual([1, 3, 4, 5]);
      const dlq = await new TopicReader(`${topic}.${group}.dlq`, kafka).start();
      const [parked] = await dlq.waitFor(1);
      await dlq.stop();
      expect(probe.attemptsOf(2)).toEqual([1, 2, 3]); // the dead-lettered message had its three attempts
      const failureHeaders = Object.keys(parked.headers).filter((h) =>
        /^msg\.(failure|origin|retry|first|last)/.test(h),
      );
      expect(failureHeaders.sort()).toEqual(
        [
          'msg.failure-category',
          'msg.failure-code',
          'msg.first-failure-at',
          'msg.last-failure-at',
          'msg.origin-destination',
          'msg.retry-attempt',
        ].sort(),
      );
      expect(parked.headers['msg.failure-category']).toBe('TRANSIENT');
      expect(parked.headers['msg.retry-attempt']).toBe('3');
      expect(parked.headers['msg.origin-destination']).toBe(topic);
      expect(Date.parse(parked.headers['msg.first-failure-at'])).toBeLessThanOrEqual(
        Date.parse(parked.headers['msg.last-failure-at']),
      );
      expect(JSON.parse(parked.value)).toMatchObject({ seq: 2 });
      // The exception's message goes to the log line only, never into a header of the DLQ copy.
      expect(Object.values(parked.headers).join('\n')).not.toContain('downstream flaked');
    },
  );

  it('REJECT: drops a non-retryable failure without a dead-letter copy, commits it and goes on', async () => {
    const probe = new ConsumerProbe();
    probe.refuse.add(2);
    const policy = { maxAttempts: 3, mode: RetryMode.PAUSE_PARTITION, onNonRetryable: 'REJECT' as const };
    const { topic, group } = await start('reject', policy, probe);
    await raw.send(five(topic));

    await eventually(async () => expect(await committedTotal(kafka, group, topic)).toBe(5));
    expect((await handled(group)).map((r) => r.seq)).toEqual([1, 3, 4, 5]);
    expect(probe.attemptsOf(2)).toEqual([1]); // message 2 once: neither retried nor paused
    const dlq = await new TopicReader(`${topic}.${group}.dlq`, kafka).start();
    expect(await dlq.settle()).toEqual([]);
    await dlq.stop();
  });

  it.each([
    ['PAUSE_PARTITION', { mode: RetryMode.PAUSE_PARTITION }],
    ['RETRY_DESTINATION', { mode: RetryMode.RETRY_DESTINATION, ordering: RetryOrdering.ALLOW_REORDER }],
    ['INLINE', { mode: RetryMode.INLINE, ordering: RetryOrdering.ALLOW_REORDER }],
  ] as const)(
    'dead-letters a PermanentError on its first failure (%s), while a VALIDATION MessageHandlingError is retried',
    async (_mode, mode) => {
      const probe = new ConsumerProbe();
      probe.failWith.set(1, () => new PermanentError('POST_TITLE_MISSING'));
      probe.failWith.set(2, (attempt) =>
        attempt < 3 ? new MessageHandlingError(FailureCategory.VALIDATION, 'POST_TITLE_MISSING') : undefined,
      );
      const { topic, group } = await start('permanent', { maxAttempts: 4, backoff: FAST, ...mode }, probe);
      await raw.send(five(topic));

      await eventually(async () => expect(await committedTotal(kafka, group, topic)).toBe(5));
      await eventually(async () =>
        expect((await handled(group)).map((r) => r.seq).sort()).toEqual([2, 3, 4, 5]),
      );
      const dlq = await new TopicReader(`${topic}.${group}.dlq`, kafka).start();
      const [parked] = await dlq.waitFor(1);
      await dlq.stop();
      expect(parked.headers).toMatchObject({
        'msg.failure-category': 'VALIDATION',
        'msg.failure-code': 'POST_TITLE_MISSING',
        'msg.retry-attempt': '1',
      });
      expect(probe.seqs.filter((seq) => seq === 1)).toHaveLength(1); // one handler run, then the DLQ
      expect(probe.seqs.filter((seq) => seq === 2)).toHaveLength(3);
    },
  );

  // claim: C-46
  it('dead-letters a DESERIALIZATION failure on its first delivery, policy or not', async () => {
    const probe = new ConsumerProbe();
    const { topic, group } = await start(
      'deser',
      { maxAttempts: 5, mode: RetryMode.PAUSE_PARTITION, backoff: FAST },
      probe,
    );
    const [first, second] = five(topic);
    await raw.send([withBody(first, '<xml/>'), second]);

    await eventually(async () => expect(await committedTotal(kafka, group, topic)).toBe(2));
    const dlq = await new TopicReader(`${topic}.${group}.dlq`, kafka).start();
    const [parked] = await dlq.waitFor(1);
    await dlq.stop();
    expect(parked.headers['msg.failure-category']).toBe('DESERIALIZATION');
    expect(parked.headers['msg.retry-attempt']).toBe('1');
    expect(probe.invocations).toBe(1);
  });

  // claim: C-44
  it('keeps the source unsettled while the DLQ refuses the copy, and settles once it is confirmed', async () => {
    const probe = new ConsumerProbe();
    probe.alwaysFail.add(1);
    const { topic, group, app } = await start('dlqfail', undefined, probe);
    const refusals = countRefusedCopies(app);
    const dlqTopic = `${topic}.${group}.dlq`;
    const admin = kafka.admin();
    await admin.connect();
    const setMaxBytes = (bytes: number) =>
      admin.alterConfigs({
        validateOnly: false,
        resources: [
          { type: 2, name: dlqTopic, configEntries: [{ name: 'max.message.bytes', value: String(bytes) }] },
        ],
      });
    await setMaxBytes(64); // the broker now refuses every copy: MESSAGE_TOO_LARGE
    await raw.send(five(topic));

    // The copy was refused, and refused again after a backoff: the source offset stays uncommitted.
    await eventually(() => refusals.count >= 2);
    expect(await committedTotal(kafka, group, topic)).toBe(0);
    expect(await handled(group)).toEqual([]);

    await setMaxBytes(1_048_576);
    await eventually(async () => expect(await committedTotal(kafka, group, topic)).toBe(5), 45_000);
    await admin.disconnect();
    expect((await handled(group)).map((r) => r.seq)).toEqual([2, 3, 4, 5]);
    const dlq = await new TopicReader(dlqTopic, kafka).start();
    expect((await dlq.waitFor(1)).length).toBeGreaterThanOrEqual(1);
    await dlq.stop();
  });

  it("parks a message no handler can take in the DLQ under a RETRY_DESTINATION default, not in a retry topic (unhandledTypes: 'dead-letter')", async () => {
    const probe = new ConsumerProbe();
    const fallback = {
      maxAttempts: 3,
      mode: RetryMode.RETRY_DESTINATION,
      ordering: RetryOrdering.ALLOW_REORDER,
      backoff: FAST,
    };
    const inline = { maxAttempts: 3, mode: RetryMode.INLINE, backoff: FAST };
    const { topic, group } = await start('deflt', inline, probe, fallback, { unhandledTypes: 'dead-letter' });
    const [first, second] = five(topic);
    await raw.send([withHeaders(first, { 'msg.type': 'OrderShipped' }), second]);

    await eventually(async () => expect(await committedTotal(kafka, group, topic)).toBe(2));
    const dlq = await new TopicReader(`${topic}.${group}.dlq`, kafka).start();
    const [parked] = await dlq.waitFor(1);
    await dlq.stop();
    expect(parked.headers['msg.failure-code']).toBe('UNKNOWN_TYPE');
    expect(parked.headers['msg.id']).toBe(first.headers['msg.id']);
    expect((await handled(group)).map((r) => r.seq)).toEqual([2]);
  });

  it('refuses at startup a retry default Kafka cannot honour, naming the destination', async () => {
    const inline = { maxAttempts: 3, mode: RetryMode.INLINE };
    const error = await start('baddefault', inline, new ConsumerProbe(), {
      maxAttempts: 3,
      mode: RetryMode.BROKER_DELAYED,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MessagingConfigurationError);
    expect((error as Error).message).toMatch(/retryDefaults\['baddefault_[a-z0-9_]+'\].*BROKER_DELAYED/s);
  });

  // claim: C-49
  it('ignores failure headers a producer put on a message of the destination itself', async () => {
    const probe = new ConsumerProbe();
    probe.alwaysFail.add(1);
    const policy = { maxAttempts: 3, mode: RetryMode.PAUSE_PARTITION, backoff: FAST };
    const { topic, group } = await start('forged', policy, probe);
    const sentAt = Date.now();
    const [first, second] = five(topic);
    const forged = { 'msg.retry-attempt': '99', 'msg.first-failure-at': '2000-01-01T00:00:00.000Z' };
    await raw.send([withHeaders(first, forged), second]);

    await eventually(async () => expect(await committedTotal(kafka, group, topic)).toBe(2));
    const dlq = await new TopicReader(`${topic}.${group}.dlq`, kafka).start();
    const [parked] = await dlq.waitFor(1);
    await dlq.stop();
    expect(probe.invocations).toBe(3 + 1); // its three attempts, not one
    expect(parked.headers['msg.retry-attempt']).toBe('3');
    expect(Date.parse(parked.headers['msg.first-failure-at'])).toBeGreaterThanOrEqual(sentAt - 1_000);
  });

  // claim: C-18
  it('refuses at startup a policy Kafka cannot honour, naming the class and method', async () => {
    const error = await start('nodelay', { maxAttempts: 3, mode: RetryMode.BROKER_DELAYED }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MessagingConfigurationError);
    expect((error as Error).message).toMatch(/OrdersConsumer\.onOrderPlaced/);
    expect((error as Error).message).toMatch(/BROKER_DELAYED/);
  });

  describe("a handler's own retry delay (RetryLaterError, an HTTP 429's Retry-After)", () => {
    /** 50 ms doubling to 5 s over 8 attempts: the policy's longest delay is 3.2 s, its first under 50 ms. */
    const SLOW_CEILING = { initialDelayMs: 50, multiplier: 2, maxDelayMs: 5_000 };
    const tooManyRequests = (seconds: string) =>
      Object.assign(new Error('Request failed with status code 429'), {
        name: 'AxiosError',
        response: { status: 429, headers: { 'retry-after': seconds } },
      });

    it.each([
      ['PAUSE_PARTITION', RetryMode.PAUSE_PARTITION, RetryOrdering.PRESERVE],
      ['RETRY_DESTINATION', RetryMode.RETRY_DESTINATION, RetryOrdering.ALLOW_REORDER],
      ['INLINE', RetryMode.INLINE, RetryOrdering.ALLOW_REORDER],
    ])(
      '%s: the next attempt comes no sooner than the RetryLaterError asked, far later than the backoff',
      async (_, mode, ordering) => {
        const probe = new ConsumerProbe();
        probe.failWith.set(1, (attempt) => (attempt === 1 ? new RetryLaterError(1_500) : undefined));
        const policy = { maxAttempts: 8, mode, ordering, backoff: SLOW_CEILING };
        const { topic, group } = await start('later', policy, probe);
        await raw.send(five(topic));

        await eventually(async () => expect(await handled(group)).toHaveLength(5));
        expect(probe.attemptsOf(1)).toEqual([1, 2]);
        expect(probe.gapAfterAttempt(1, 1)).toBeGreaterThanOrEqual(1_450); // 1.5 s asked (a timer may fire a ms early)
        const dlq = await new TopicReader(`${topic}.${group}.dlq`, kafka).start();
        expect(await dlq.settle()).toEqual([]);
        await dlq.stop();
      },
    );

    it("honours an HTTP client's 429 Retry-After, and caps a delay past the policy's longest", async () => {
      const probe = new ConsumerProbe();
      probe.failWith.set(1, (attempt) => (attempt === 1 ? tooManyRequests('2') : undefined));
      probe.failWith.set(2, (attempt) => (attempt === 1 ? new RetryLaterError(3_600_000) : undefined));
      const policy = { maxAttempts: 8, mode: RetryMode.PAUSE_PARTITION, backoff: SLOW_CEILING };
      const { topic, group } = await start('later429', policy, probe);
      await raw.send(five(topic));

      await eventually(async () => expect(await handled(group)).toHaveLength(5));
      expect(probe.gapAfterAttempt(1, 1)).toBeGreaterThanOrEqual(1_950);
      // An hour asked, 3.2 s at most waited (the policy's longest delay): a generous bound, far below the hour.
      expect(probe.gapAfterAttempt(2, 1)).toBeGreaterThanOrEqual(3_150);
      expect(probe.gapAfterAttempt(2, 1)).toBeLessThan(60_000);
    });

    it('still dead-letters after maxAttempts, whatever the delay asked', async () => {
      const probe = new ConsumerProbe();
      probe.failWith.set(1, () => new RetryLaterError(100, { code: 'QUOTA' }));
      const policy = { maxAttempts: 2, mode: RetryMode.PAUSE_PARTITION, backoff: SLOW_CEILING };
      const { topic, group } = await start('laterdlq', policy, probe);
      await raw.send(five(topic));

      await eventually(async () => expect(await committedTotal(kafka, group, topic)).toBe(5));
      const dlq = await new TopicReader(`${topic}.${group}.dlq`, kafka).start();
      const [parked] = await dlq.waitFor(1);
      await dlq.stop();
      expect(parked.headers).toMatchObject({
        'msg.failure-category': 'TRANSIENT',
        'msg.failure-code': 'QUOTA',
        'msg.retry-attempt': '2',
      });
    });
  });
});
