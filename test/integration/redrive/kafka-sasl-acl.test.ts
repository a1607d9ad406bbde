import { randomBytes } from 'node:crypto';
import { TestingModule } from '@nestjs/testing';
import { Admin, Kafka, logLevel } from 'kafkajs';
import {
  AdminCredentialRefusedError,
  applyTopology,
  InsecureAdminConnectionError,
  KafkaRedriveBroker,
} from 'nest-reliable-messaging/redrive';
import { CliIo, runMessagingCli } from 'nest-reliable-messaging/testing';
import { KafkaBroker } from '../../../tools/infra/kafka-broker';
import { eventually } from '../../harness/eventually';
import { startPrivateBroker } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { RawKafkaProducer } from '../support/kafka-wire';
import { createMessagingApp } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage } from '../support/raw-messages';
import { applyKafkaAclRecipe } from './support/kafka-acl-recipe';
import { RedriveFixture } from './support/redrive-fixture';

/**
 * Issue 15, point 6: Kafka credentials for real. A private broker with SASL/SCRAM and `StandardAuthorizer`
 * ACLs set up with the guide's recipe (docs/guide/08-redrive.md): the service principal consumes and dead-letters but cannot read,
 * delete or re-create its DLQ; the topology admin declares the topics; the redrive admin plans and redrives
 * (an approver approves); without SASL, or with SASL plain without TLS, the admin CLI refuses to connect.
 */
describe('Kafka with SASL/SCRAM and ACLs: least privilege for services, redrive for the admin', () => {
  const users = {
    'kafka-admin': randomBytes(9).toString('hex'),
    'orders-service': randomBytes(9).toString('hex'),
    'ops-redrive': randomBytes(9).toString('hex'),
    'ops-topology': randomBytes(9).toString('hex'),
  };
  type User = keyof typeof users;
  const destination = uniqueName('acl_orders');
  const group = 'billing';
  const dlq = `${destination}.${group}.dlq`;
  const probe = new ConsumerProbe();
  let broker: KafkaBroker;
  let schema: TestSchema;
  let fixture: RedriveFixture;
  let app: TestingModule | undefined;
  let clusterAdmin: Admin;
  let producer: RawKafkaProducer;

  const kafkaAs = (user: User, password = users[user]) =>
    new Kafka({
      clientId: `test-${user}`,
      brokers: broker.brokers,
      sasl: { mechanism: 'scram-sha-512', username: user, password },
      logLevel: logLevel.NOTHING,
      retry: { retries: 1 },
    });
  const adminBroker = (): KafkaRedriveBroker => ({
    kind: 'kafka',
    brokers: broker.brokers,
    sasl: 'scram-sha-512',
  });
  const credential = (user: User, password = users[user]) => ({ principal: user, secret: password });
  /** The consuming service, as its own principal, checking (not declaring) its topology. */
  const serviceApp = () =>
    createMessagingApp({
      schema: schema.name,
      transport: {
        kind: 'kafka',
        brokers: broker.brokers,
        sasl: { mechanism: 'scram-sha-512', username: 'orders-service', password: users['orders-service'] },
      },
      entities: [HandledOrder],
      providers: [
        { provide: ConsumerProbe, useValue: probe },
        ordersConsumer(orderPlaced(destination), group),
      ],
      messaging: { relay: { enabled: false }, topology: 'verify' },
    });
  const dlqDepth = async () =>
    (await clusterAdmin.fetchTopicOffsets(dlq)).reduce((sum, p) => sum + Number(p.high), 0);

  beforeAll(async () => {
    broker = await startPrivateBroker({ users, superUsers: ['kafka-admin'] });
    schema = await createTestSchema('kafka_acl');
    fixture = await RedriveFixture.create('kafka_acl');
    clusterAdmin = kafkaAs('kafka-admin').admin();
    await clusterAdmin.connect();
    await applyKafkaAclRecipe(clusterAdmin, {
      destination,
      group,
      service: 'orders-service',
      redriveAdmin: 'ops-redrive',
      topologyAdmin: 'ops-topology',
    });
    producer = new RawKafkaProducer(kafkaAs('kafka-admin'));
  });

  afterAll(async () => {
    await app?.close();
    await producer?.stop();
    await clusterAdmin?.disconnect();
    await fixture?.close();
    await schema?.drop();
    await broker?.destroy();
  });

  it('the topology admin declares the topics; the service principal may not', async () => {
    const topology = { destinations: [destination], groups: [{ group, destination, retryTiersMs: [] }] };
    await expect(
      applyTopology({ broker: adminBroker(), credential: credential('orders-service') }, topology),
    ).rejects.toMatchObject({ errors: [expect.objectContaining({ type: 'TOPIC_AUTHORIZATION_FAILED' })] });
    await applyTopology({ broker: adminBroker(), credential: credential('ops-topology') }, topology);
    const topics = await clusterAdmin.listTopics();
    expect(topics).toEqual(expect.arrayContaining([destination, dlq]));
  });

  it('the service consumes over SCRAM and dead-letters, in verify mode', async () => {
    app = await createMessagingApp({
      schema: schema.name,
      transport: {
        kind: 'kafka',
        brokers: broker.brokers,
        sasl: { mechanism: 'scram-sha-512', username: 'orders-service', password: users['orders-service'] },
      },
      entities: [HandledOrder],
      providers: [
        { provide: ConsumerProbe, useValue: probe },
        ordersConsumer(orderPlaced(destination), group),
      ],
      messaging: { relay: { enabled: false }, topology: 'verify' },
    });
    probe.alwaysFail.add(2);
    await producer.send([1, 2, 3].map((seq) => orderMessage(destination, { customer: `c${seq}`, seq })));
    await eventually(async () => expect(await dlqDepth()).toBe(1));
    await eventually(async () => expect(probe.contexts.map((c) => c.attempt)).toHaveLength(3));
  });

  // claim: C-74
  it('the service principal cannot read, delete or re-create its DLQ', async () => {
    // The service's own group, on the DLQ: the broker refuses the fetch (the app is stopped meanwhile, so
    // that this consumer does not take its partitions).
    await app?.close();
    app = undefined;
    const asService = kafkaAs('orders-service');
    const consumer = asService.consumer({ groupId: group, retry: { retries: 0 } });
    const crashed = new Promise<unknown>((resolve) =>
      consumer.on(consumer.events.CRASH, (event) => resolve(event.payload.error)),
    );
    const records: unknown[] = [];
    await consumer.connect();
    await consumer.subscribe({ topics: [dlq], fromBeginning: true });
    await consumer.run({ eachMessage: async (payload) => void records.push(payload) });
    expect(((await crashed) as Error).message).toMatch(/Topic authorization failed/);
    await consumer.disconnect();
    expect(records).toEqual([]);
    const admin = asService.admin();
    await admin.connect();
    await expect(admin.deleteTopics({ topics: [dlq] })).rejects.toMatchObject({
      type: 'TOPIC_AUTHORIZATION_FAILED',
    });
    await expect(admin.createTopics({ topics: [{ topic: `${dlq}.x` }] })).rejects.toThrow();
    await admin.disconnect();
    // Nor redrive: the broker refuses the service principal to the redrive.
    const asServiceRedrive = fixture.service(adminBroker(), credential('orders-service'));
    await expect(asServiceRedrive.plan({ source: dlq })).rejects.toThrow(AdminCredentialRefusedError);
    await expect(
      fixture.service(adminBroker(), credential('ops-redrive', 'wrong')).plan({ source: dlq }),
    ).rejects.toThrow(AdminCredentialRefusedError);
    expect(await dlqDepth()).toBe(1);
  });

  // claim: C-70
  it('refuses an admin connection without SASL, or with SASL plain without TLS', async () => {
    expect(() =>
      fixture.service({ kind: 'kafka', brokers: broker.brokers }, credential('ops-redrive')),
    ).toThrow(InsecureAdminConnectionError);
    expect(() => fixture.service({ ...adminBroker(), sasl: 'plain' }, credential('ops-redrive'))).toThrow(
      InsecureAdminConnectionError,
    );
    const cli = async (flags: string[]) => {
      let err = '';
      const io: CliIo = {
        env: {
          ...fixture.cliEnv,
          MESSAGING_ADMIN_KAFKA_BROKERS: broker.brokers.join(','),
          MESSAGING_ADMIN_PRINCIPAL: 'ops-redrive',
          MESSAGING_ADMIN_PASSWORD: users['ops-redrive'],
        },
        out: () => undefined,
        err: (text) => void (err += text),
        cwd: fixture.folder,
      };
      return { code: await runMessagingCli(['dlq', 'plan', '--source', dlq, ...flags], io), err };
    };
    expect(await cli([])).toMatchObject({ code: 2 });
    expect((await cli(['--kafka-sasl', 'plain'])).err).toContain('clear text');
    expect((await cli(['--kafka-sasl', 'scram-sha-512'])).code).toBe(0);
  });

  it('the redrive admin plans; an approver approves; the redrive brings the message back; the service handles it', async () => {
    probe.alwaysFail.clear();
    app = await serviceApp();
    const redrive = fixture.service(adminBroker(), credential('ops-redrive'));
    const plan = await redrive.plan({ source: dlq });
    expect(plan).toMatchObject({ target: destination, group, plannedBy: 'ops-redrive' });
    expect(plan.messages).toHaveLength(1);
    const result = await redrive.execute(await fixture.approve(redrive, plan));
    expect(result).toMatchObject({ redriven: 1, leftInSource: 0 });
    await eventually(async () => {
      const handledTwo = probe.contexts.filter((c) => c.messageId === plan.messages[0].messageId);
      expect(handledTwo.map((c) => c.key)).toEqual(['c2', 'c2']);
    });
    const [committed] = await clusterAdmin.fetchOffsets({ groupId: `${dlq}.redrive`, topics: [dlq] });
    expect(committed.partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0)).toBe(1);
    expect((await redrive.plan({ source: dlq })).messages).toEqual([]);
  });
});
