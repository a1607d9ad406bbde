import { TestingModule } from '@nestjs/testing';
import { Admin } from 'kafkajs';
import { MessagingMetrics } from 'nest-reliable-messaging';
import {
  RedriveBatchTooLargeError,
  RedriveHeaders,
  RedrivePlan,
  RedrivePlanStaleError,
  RedriveService,
} from 'nest-reliable-messaging/redrive';
import { eventually } from '../../harness/eventually';
import { KafkaTopics, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { infraEnv } from '../../harness/infra';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { committedTotal, RawKafkaProducer } from '../support/kafka-wire';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage } from '../support/raw-messages';
import { TopicReader } from '../support/topic-reader';
import { parkedOrder } from './support/parked-messages';
import { RedriveFixture } from './support/redrive-fixture';

/**
 * Redrive on Kafka: a consumer group parks failed messages in its DLQ topic; a dry run changes nothing; the
 * redrive republishes them to the destination topic, the group applies each once and a group that had
 * handled them skips them (they name the failing group); the group `<dlq>.redrive` marks what was moved.
 */
describe('Redrive on Kafka', () => {
  const kafka = testKafka();
  const topics = new KafkaTopics(kafka);
  const raw = new RawKafkaProducer(kafka);
  const metrics = new MessagingMetrics();
  const admin: Admin = kafka.admin();
  let schema: TestSchema;
  /** Consumer groups the suite made (the apps' and the redrive groups), deleted after. */
  const groups: string[] = [];
  const apps: TestingModule[] = [];
  let fixture: RedriveFixture;
  let redrive: RedriveService;
  const approve = (plan: RedrivePlan) => fixture.approve(redrive, plan);

  beforeAll(async () => {
    schema = await createTestSchema('redrive_kafka');
    fixture = await RedriveFixture.create('redrive_kafka');
    redrive = fixture.service(
      { kind: 'kafka', brokers: infraEnv().kafkaBrokers, allowPlaintextLocal: true },
      { principal: 'redrive-admin', secret: 'test-secret' },
      { metrics },
    );
    await admin.connect();
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await fixture.close();
    await raw.stop();
    await admin.deleteGroups(groups).catch(() => undefined);
    await admin.disconnect();
    await topics.cleanup();
    await schema.drop();
  });

  async function consumer(topic: string, group: string, probe: ConsumerProbe): Promise<void> {
    apps.push(
      await createMessagingApp({
        schema: schema.name,
        transport: kafkaTransport(),
        entities: [HandledOrder],
        providers: [{ provide: ConsumerProbe, useValue: probe }, ordersConsumer(orderPlaced(topic), group)],
        messaging: { relay: { enabled: false }, consumers: { concurrency: 3 } },
      }),
    );
  }

  const handled = (group: string) =>
    schema.query<{ messageId: string; attempt: number }>(
      'select message_id as "messageId", attempt from handled_orders where consumer_group = $1 order by id',
      [group],
    );
  const inboxSize = async (group: string) =>
    Number(
      (
        await schema.query<{ n: string }>(
          'select count(*) n from messaging_inbox where consumer_group = $1',
          [group],
        )
      )[0].n,
    );
  const highWatermarks = async (topic: string) =>
    (await admin.fetchTopicOffsets(topic)).map((p) => p.high).join(',');
  const committed = async (group: string, topic: string) =>
    (await admin.fetchOffsets({ groupId: group, topics: [topic] }))[0].partitions
      .map((p) => p.offset)
      .join(',');

  it('a group dead-letters, a dry run changes nothing, the redrive is applied once', async () => {
    const topic = await topics.create(uniqueName('redrive_k_orders'), 3);
    const failing = uniqueName('redrive_k_billing');
    const healthy = uniqueName('redrive_k_mail');
    const dlq = `${topic}.${failing}.dlq`;
    topics.track(dlq, `${topic}.${healthy}.dlq`);
    groups.push(failing, healthy, `${dlq}.redrive`);
    const probe = new ConsumerProbe();
    [1, 2, 3, 4].forEach((seq) => probe.alwaysFail.add(seq));
    await consumer(topic, failing, probe);
    await consumer(topic, healthy, new ConsumerProbe());
    await raw.send([1, 2, 3, 4].map((seq) => orderMessage(topic, { customer: `c${seq}`, seq })));
    await eventually(async () => expect(await handled(healthy)).toHaveLength(4));
    await eventually(async () =>
      expect((await admin.fetchTopicOffsets(dlq)).reduce((s, p) => s + Number(p.high), 0)).toBe(4),
    );

    const dlqBefore = await highWatermarks(dlq);
    const topicBefore = await highWatermarks(topic);
    const plan = await redrive.plan({ source: dlq });
    expect(plan).toMatchObject({ transport: 'kafka', source: dlq, target: topic, depth: 4 });
    expect(plan.messages.map((m) => m.failureCategory)).toEqual(Array(4).fill('TRANSIENT'));
    expect(await highWatermarks(dlq)).toBe(dlqBefore);
    expect(await highWatermarks(topic)).toBe(topicBefore);
    expect(await committed(`${dlq}.redrive`, dlq)).toBe('-1,-1,-1');
    expect((await redrive.plan({ source: dlq })).messages).toEqual(plan.messages);

    probe.alwaysFail.clear();
    const result = await redrive.execute(await approve(plan));
    expect(result).toMatchObject({ redriven: 4, leftInSource: 0 });
    const planned = plan.messages.map((m) => m.messageId).sort();
    await eventually(async () =>
      expect((await handled(failing)).map((h) => h.messageId).sort()).toEqual(planned),
    );
    expect((await handled(failing)).map((h) => h.attempt)).toEqual([1, 1, 1, 1]);
    expect(await inboxSize(failing)).toBe(4);
    // The healthy group got the copies too, and skipped them: they name the failing group.
    const reader = await new TopicReader(topic, kafka).start();
    const records = await reader.waitFor(8);
    await reader.stop();
    expect(records.filter((r) => r.headers[RedriveHeaders.REDRIVE_ID] === result.redriveId)).toHaveLength(4);
    // Both groups settled all eight records (four originals, four copies): nothing more is coming.
    await eventually(async () => expect(await committedTotal(kafka, healthy, topic)).toBe(8));
    await eventually(async () => expect(await committedTotal(kafka, failing, topic)).toBe(8));
    expect(await handled(healthy)).toHaveLength(4);
    expect(await handled(failing)).toHaveLength(4);
    expect((await redrive.plan({ source: dlq })).messages).toEqual([]);
  });

  it('plans at most 100 of 101 messages, contiguous per partition, and refuses a limit of 101', async () => {
    const destination = uniqueName('redrive_k_bulk');
    const dlq = await topics.create(`${destination}.billing.dlq`, 3);
    const target = await topics.create(destination, 3);
    groups.push(`${dlq}.redrive`);
    for (let partition = 0; partition < 3; partition++) {
      const seqs = Array.from({ length: 101 }, (_, i) => i).filter((i) => i % 3 === partition);
      await raw.send(
        seqs.map((seq) => parkedOrder(destination, 'billing', seq)),
        partition,
      );
    }
    await expect(redrive.plan({ source: dlq, limit: 101 })).rejects.toThrow(RedriveBatchTooLargeError);
    const counted = async () => (await metrics.redriven.get()).values.reduce((sum, v) => sum + v.value, 0);
    const before = await counted();

    const plan = await redrive.plan({ source: dlq });
    expect(plan).toMatchObject({ depth: 101, target });
    expect(plan.messages).toHaveLength(100);
    for (let partition = 0; partition < 3; partition++) {
      const offsets = plan.messages.flatMap((m) =>
        m.position.kind === 'partition' && m.position.partition === partition
          ? [Number(m.position.offset)]
          : [],
      );
      expect(offsets).toEqual(offsets.map((_, i) => i));
    }
    const result = await redrive.execute(await approve(plan));
    expect(result.redriven).toBe(100);
    expect(await counted()).toBe(before + 100);
    expect((await admin.fetchTopicOffsets(target)).reduce((s, p) => s + Number(p.high), 0)).toBe(100);
    const rest = await redrive.plan({ source: dlq });
    expect(rest).toMatchObject({ depth: 1 });
    expect(rest.messages).toHaveLength(1);
  });

  it('reads one message by its position, with the start of its payload, and nothing already redriven', async () => {
    const destination = uniqueName('redrive_k_one');
    const dlq = await topics.create(`${destination}.billing.dlq`, 1);
    await topics.create(destination, 1);
    groups.push(`${dlq}.redrive`);
    const parked = [1, 2, 3].map((seq) => parkedOrder(destination, 'billing', seq));
    await raw.send(parked, 0);
    const at = (offset: string) => ({ kind: 'partition' as const, partition: 0, offset });
    const second = await redrive.inspectMessage(dlq, at('1'), parked[1].headers['msg.id'], 10);
    expect(second?.message.messageId).toBe(parked[1].headers['msg.id']);
    expect(second?.payload).toEqual({
      text: parked[1].body.subarray(0, 10).toString('utf8'),
      bytes: parked[1].body.length,
      truncated: true,
    });
    expect(await redrive.inspectMessage(dlq, at('1'), parked[0].headers['msg.id'])).toBeUndefined();
    expect(await redrive.inspectMessage(dlq, at('3'), parked[1].headers['msg.id'])).toBeUndefined();
    // Once redriven (the first), a message is not shown at its old position any more.
    const plan = await redrive.plan({ source: dlq, limit: 1 });
    await redrive.execute(await approve(plan));
    expect(await redrive.inspectMessage(dlq, at('0'), parked[0].headers['msg.id'])).toBeUndefined();
  });

  // claim: C-73
  it('leaves a message whose copy the target refuses (NOT_CONFIRMED) in the DLQ, and those after it', async () => {
    const destination = uniqueName('redrive_k_refused');
    const dlq = await topics.create(`${destination}.billing.dlq`, 1);
    const target = await topics.create(destination, 1);
    groups.push(`${dlq}.redrive`);
    await raw.send(
      [1, 2, 3].map((seq) => parkedOrder(destination, 'billing', seq, 'c')),
      0,
    );
    const setMaxBytes = (bytes: number) =>
      admin.alterConfigs({
        validateOnly: false,
        resources: [
          { type: 2, name: target, configEntries: [{ name: 'max.message.bytes', value: String(bytes) }] },
        ],
      });
    await setMaxBytes(64); // the target refuses every copy: MESSAGE_TOO_LARGE

    const plan = await redrive.plan({ source: dlq });
    const result = await redrive.execute(await approve(plan));
    expect(result).toMatchObject({ redriven: 0, leftInSource: 3 });
    expect(result.messages.map((m) => m.status)).toEqual(['NOT_CONFIRMED', 'NOT_ATTEMPTED', 'NOT_ATTEMPTED']);
    expect(result.messages[0].error).toMatch(/^REJECTED: /);
    expect(await committed(`${dlq}.redrive`, dlq)).toBe('-1');
    expect(await highWatermarks(target)).toBe('0');

    // Once the target takes them, the same messages move, in order.
    await setMaxBytes(1_048_576);
    // The broker applies a topic's config a moment after alterConfigs answers (a CI run redrove before it
    // did): wait until the target takes a record over the old limit, sent by a producer of its own.
    const probe = kafka.producer();
    await probe.connect();
    try {
      await eventually(() =>
        probe.send({ topic: target, acks: -1, messages: [{ value: Buffer.alloc(512) }] }),
      );
    } finally {
      await probe.disconnect();
    }
    const again = await redrive.plan({ source: dlq });
    expect(again.messages.map((m) => m.messageId)).toEqual(plan.messages.map((m) => m.messageId));
    expect(await redrive.execute(await approve(again))).toMatchObject({ redriven: 3, leftInSource: 0 });
    expect(await committed(`${dlq}.redrive`, dlq)).toBe('3');
  });

  it('refuses a plan the DLQ no longer matches (another redrive moved its messages) and moves nothing', async () => {
    const destination = uniqueName('redrive_k_stale');
    const dlq = await topics.create(`${destination}.billing.dlq`, 1);
    const target = await topics.create(destination, 1);
    groups.push(`${dlq}.redrive`);
    await raw.send(
      [1, 2, 3].map((seq) => parkedOrder(destination, 'billing', seq, 'c')),
      0,
    );

    const first = await redrive.plan({ source: dlq, limit: 2 });
    const second = await redrive.plan({ source: dlq, limit: 2 });
    expect(await redrive.execute(await approve(second))).toMatchObject({ redriven: 2 });
    expect(await highWatermarks(target)).toBe('2');

    await expect(redrive.execute(await approve(first))).rejects.toThrow(RedrivePlanStaleError);
    expect(await highWatermarks(target)).toBe('2');
    expect(await committed(`${dlq}.redrive`, dlq)).toBe('2');
  });
});
