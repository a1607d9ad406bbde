import { TestingModule } from '@nestjs/testing';
import * as amqp from 'amqplib';
import { Admin } from 'kafkajs';
import {
  NotADeadLetterSourceError,
  RedriveHeaders,
  RedriveTargetRefusedError,
} from 'nest-reliable-messaging/redrive';
import { eventually } from '../../harness/eventually';
import { infraEnv } from '../../harness/infra';
import { KafkaTopics, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { RawKafkaProducer } from '../support/kafka-wire';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage, withHeaders } from '../support/raw-messages';
import { TopicReader } from '../support/topic-reader';
import { declareGroupQueues, depthOf, parkedOrder, sendToQueues } from './support/parked-messages';
import { RabbitVhost } from './support/rabbit-vhost';
import { RedriveFixture } from './support/redrive-fixture';

/**
 * Issue 15, points 4 and 5, and issue 14 defect 7. A redrive's source must be a dead-letter destination and
 * its target is derived from the source's name (checked against `msg.origin-destination`, never taken from
 * it); on Kafka the copy goes back to the destination topic under its real key (its key's partition), and
 * only the group that failed handles it again, however long ago the other groups' inboxes forgot it.
 */
describe('Redrive targets and the group that failed', () => {
  const kafka = testKafka();
  const topics = new KafkaTopics(kafka);
  const raw = new RawKafkaProducer(kafka);
  const admin: Admin = kafka.admin();
  const apps: TestingModule[] = [];
  const groups: string[] = [];
  let schema: TestSchema;
  let vhost: RabbitVhost;
  let connection: amqp.ChannelModel;
  let fixture: RedriveFixture;
  const kafkaAdmin = () =>
    fixture.service(
      { kind: 'kafka', brokers: infraEnv().kafkaBrokers, allowPlaintextLocal: true },
      { principal: 'ops-carol', secret: 'x' },
    );

  beforeAll(async () => {
    fixture = await RedriveFixture.create('targets');
    schema = await createTestSchema('targets');
    vhost = await RabbitVhost.create('targets');
    connection = await amqp.connect(vhost.urlAs(vhost.admin));
    await admin.connect();
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await raw.stop();
    await admin.deleteGroups(groups).catch(() => undefined);
    await admin.disconnect();
    await topics.cleanup();
    await connection?.close().catch(() => undefined);
    await vhost?.delete();
    await schema?.drop();
    await fixture?.close();
  });

  // claim: C-68
  it('refuses a msg.origin-destination planted to point the redrive at another topic', async () => {
    const destination = uniqueName('planted');
    const dlq = await topics.create(`${destination}.billing.dlq`, 1);
    const victim = await topics.create(uniqueName('victim'), 1);
    await raw.send([
      withHeaders(parkedOrder(destination, 'billing', 1), { 'msg.origin-destination': victim }),
    ]);
    await expect(kafkaAdmin().plan({ source: dlq })).rejects.toThrow(RedriveTargetRefusedError);
    expect((await admin.fetchTopicOffsets(victim))[0].high).toBe('0');
  });

  it('refuses an explicit target other than the one the source derives', async () => {
    const destination = uniqueName('explicit');
    const dlq = await topics.create(`${destination}.billing.dlq`, 1);
    await topics.create(destination, 1);
    const other = await topics.create(uniqueName('other'), 1);
    await raw.send([parkedOrder(destination, 'billing', 1)]);
    await expect(kafkaAdmin().plan({ source: dlq, target: other })).rejects.toThrow(
      RedriveTargetRefusedError,
    );
    await expect(kafkaAdmin().plan({ source: dlq, target: `${destination}.other.dlq` })).rejects.toThrow(
      RedriveTargetRefusedError,
    );
    expect((await kafkaAdmin().plan({ source: dlq, target: destination })).target).toBe(destination);
  });

  it('refuses a live work queue, or a DLQ holding messages that are not dead-letter copies, as a source', async () => {
    const destination = uniqueName('live');
    const workQueue = `${destination}.billing`;
    await declareGroupQueues(connection, workQueue);
    const live = orderMessage(destination, { customer: 'c1', seq: 1 });
    await sendToQueues(connection, [
      { ...live, destination: workQueue },
      { ...live, destination: `${workQueue}.dlq` },
    ]);
    const rabbit = fixture.service(
      { kind: 'rabbitmq', url: vhost.url },
      { principal: vhost.admin.name, secret: vhost.admin.password },
    );
    await expect(rabbit.plan({ source: workQueue })).rejects.toThrow(NotADeadLetterSourceError);
    await expect(rabbit.plan({ source: `${workQueue}.dlq` })).rejects.toThrow(NotADeadLetterSourceError);
    expect(await depthOf(connection, workQueue)).toBe(1);
  });

  // claim: C-68, C-69
  it('on Kafka, brings a message back on its key’s partition, with its real key, to the failing group only', async () => {
    const topic = await topics.create(uniqueName('groups'), 3);
    const failing = uniqueName('failing');
    const healthy = uniqueName('healthy');
    const dlq = `${topic}.${failing}.dlq`;
    topics.track(dlq, `${topic}.${healthy}.dlq`);
    groups.push(failing, healthy, `${dlq}.redrive`);
    const failingProbe = new ConsumerProbe();
    failingProbe.alwaysFail.add(1);
    const healthyProbe = new ConsumerProbe();
    for (const [group, probe] of [
      [failing, failingProbe],
      [healthy, healthyProbe],
    ] as const) {
      apps.push(
        await createMessagingApp({
          schema: schema.name,
          transport: kafkaTransport(),
          entities: [HandledOrder],
          providers: [{ provide: ConsumerProbe, useValue: probe }, ordersConsumer(orderPlaced(topic), group)],
          messaging: { relay: { enabled: false } },
        }),
      );
    }
    await raw.send([orderMessage(topic, { customer: 'author-7', seq: 1 })]);
    await eventually(async () =>
      expect((await admin.fetchTopicOffsets(dlq)).reduce((s, p) => s + Number(p.high), 0)).toBe(1),
    );
    await eventually(async () => expect(healthyProbe.invocations).toBe(1));
    // The healthy group's inbox record has expired (retention passed) by the time of the redrive.
    await schema.query('delete from messaging_inbox where consumer_group = $1', [healthy]);
    failingProbe.alwaysFail.clear();

    const service = kafkaAdmin();
    const plan = await service.plan({ source: dlq });
    expect(plan).toMatchObject({ target: topic, group: failing });
    const result = await service.execute(await fixture.approve(service, plan));
    expect(result.redriven).toBe(1);

    await eventually(async () => expect(failingProbe.contexts).toHaveLength(2));
    expect(failingProbe.contexts[1].key).toBe('author-7');
    const reader = await new TopicReader(topic, kafka).start();
    const [original, redriven] = await reader.waitFor(2);
    await reader.stop();
    expect(redriven.headers[RedriveHeaders.REDRIVE_GROUP]).toBe(failing);
    expect(redriven.key).toBe('author-7');
    expect(redriven.partition).toBe(original.partition);
    // The healthy group received the copy and skipped it: its handler ran once, its offset moved past it.
    await eventually(async () => {
      const [offsets] = await admin.fetchOffsets({ groupId: healthy, topics: [topic] });
      expect(offsets.partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0)).toBe(2);
    });
    expect(healthyProbe.invocations).toBe(1);
  });
});
