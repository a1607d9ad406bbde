import { TestingModule } from '@nestjs/testing';
import * as amqp from 'amqplib';
import { applyTopology } from 'nest-reliable-messaging/redrive';
import {
  AdminCredentialRefusedError,
  MissingAdminCredentialError,
  RedriveService,
} from 'nest-reliable-messaging/redrive';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { createMessagingApp, rabbitTransport } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage } from '../support/raw-messages';
import { publishRaw } from '../support/rabbit-wire';
import { depthOf } from './support/parked-messages';
import { RabbitVhost } from './support/rabbit-vhost';
import { RedriveFixture } from './support/redrive-fixture';

/**
 * The services connect as a least-privilege user that may not read dead-letter queues; only the admin user
 * (the CLI's) can plan and run a redrive. A consumer that failed parks messages; after the fix, a redrive
 * brings them back to its work queue and it applies each one once.
 */
describe('Redrive on RabbitMQ with a least-privilege service user', () => {
  const destination = uniqueName('lp_orders');
  const group = uniqueName('billing');
  const workQueue = `${destination}.${group}`;
  const dlq = `${workQueue}.dlq`;
  const probe = new ConsumerProbe();
  let vhost: RabbitVhost;
  let schema: TestSchema;
  let app: TestingModule | undefined;
  let asService: amqp.ChannelModel;
  let asAdmin: amqp.ChannelModel;
  let fixture: RedriveFixture;

  function redrive(user: { name: string; password: string } | undefined): RedriveService {
    return fixture.service(
      { kind: 'rabbitmq', url: vhost.url },
      user && { principal: user.name, secret: user.password },
    );
  }

  beforeAll(async () => {
    vhost = await RabbitVhost.create('redrive_lp');
    schema = await createTestSchema('redrive_lp');
    fixture = await RedriveFixture.create('redrive_lp');
    // The admin declares the topology; the service, which may configure nothing, only checks it.
    const credential = { principal: vhost.admin.name, secret: vhost.admin.password };
    await applyTopology(
      { broker: { kind: 'rabbitmq', url: vhost.url }, credential },
      { destinations: [destination], groups: [{ group, destination, retryTiersMs: [] }] },
    );
    app = await createMessagingApp({
      schema: schema.name,
      transport: rabbitTransport(vhost.urlAs(vhost.service)),
      entities: [HandledOrder],
      providers: [
        { provide: ConsumerProbe, useValue: probe },
        ordersConsumer(orderPlaced(destination), group),
      ],
      messaging: { relay: { enabled: false }, topology: 'verify' },
    });
    asService = await amqp.connect(vhost.urlAs(vhost.service));
    asAdmin = await amqp.connect(vhost.urlAs(vhost.admin));
  });

  afterAll(async () => {
    await fixture?.close();
    await app?.close();
    await asService?.close().catch(() => undefined);
    await asAdmin?.close().catch(() => undefined);
    await vhost?.delete();
    await schema?.drop();
  });

  const handled = () =>
    schema.query<{ messageId: string; attempt: number }>(
      'select message_id as "messageId", attempt from handled_orders where consumer_group = $1 order by id',
      [group],
    );
  const inbox = () =>
    schema.query<{ messageId: string }>(
      'select message_id as "messageId" from messaging_inbox where consumer_group = $1',
      [group],
    );

  it('lets the service user dead-letter failed messages but not read the dead-letter queue', async () => {
    [1, 2, 3].forEach((seq) => probe.alwaysFail.add(seq));
    const messages = [1, 2, 3].map((seq) => orderMessage(destination, { customer: `c${seq}`, seq }));
    await publishRaw(asService, messages);

    // The app, as the service user, published the copies to the DLQ through its group's failure exchange.
    await eventually(async () => expect(await depthOf(asAdmin, dlq)).toBe(3));
    expect(await handled()).toHaveLength(0);

    const channel = await asService.createChannel();
    channel.on('error', () => undefined);
    await expect(channel.get(dlq, { noAck: false })).rejects.toMatchObject({ code: 403 });
    expect(await depthOf(asAdmin, dlq)).toBe(3);
  });

  // Issue 45 finding 9: the archive of discarded messages is the record nobody may read or destroy but the admin.
  // claim: C-74
  it('refuses the service user reading, consuming or purging a DLQ archive', async () => {
    const archive = `${dlq}.archive`;
    const admin = await asAdmin.createChannel();
    await admin.assertQueue(archive, { durable: true });
    admin.sendToQueue(archive, Buffer.from('{"discarded":true}'), { persistent: true });
    await eventually(async () => expect(await depthOf(asAdmin, archive)).toBe(1));
    for (const attempt of [
      (c: amqp.Channel) => c.get(archive, { noAck: false }),
      (c: amqp.Channel) => c.purgeQueue(archive),
      (c: amqp.Channel) => c.consume(archive, () => undefined),
    ]) {
      const channel = await asService.createChannel();
      channel.on('error', () => undefined);
      await expect(attempt(channel)).rejects.toMatchObject({ code: 403 });
    }
    expect(await depthOf(asAdmin, archive)).toBe(1);
    await admin.deleteQueue(archive);
    await admin.close();
  });

  it('refuses a redrive without a credential, and with the service user’s', async () => {
    expect(() => redrive(undefined)).toThrow(MissingAdminCredentialError);
    await expect(redrive(vhost.service).plan({ source: dlq })).rejects.toThrow(AdminCredentialRefusedError);
    await expect(redrive({ ...vhost.admin, password: 'wrong' }).plan({ source: dlq })).rejects.toThrow(
      AdminCredentialRefusedError,
    );
    expect(await depthOf(asAdmin, dlq)).toBe(3);
  });

  it('as the admin, brings the messages back to the work queue; the fixed app applies each once', async () => {
    probe.alwaysFail.clear();
    const admin = redrive(vhost.admin);
    const plan = await admin.plan({ source: dlq });
    expect(plan.target).toBe(workQueue);
    expect(plan.messages.map((m) => `${m.failureCategory}/${m.attempts}`)).toEqual(
      Array(3).fill('TRANSIENT/1'),
    );

    const result = await admin.execute(await fixture.approve(admin, plan));
    expect(result).toMatchObject({ redriven: 3, leftInSource: 0 });

    const planned = plan.messages.map((m) => m.messageId).sort();
    await eventually(async () => expect((await handled()).map((h) => h.messageId).sort()).toEqual(planned));
    await eventually(async () => expect(await depthOf(asAdmin, workQueue)).toBe(0));
    expect(await depthOf(asAdmin, dlq)).toBe(0);
    // Failure headers were dropped: the consumer counted its attempts afresh.
    expect((await handled()).map((h) => h.attempt)).toEqual([1, 1, 1]);
    expect((await inbox()).map((r) => r.messageId).sort()).toEqual(planned);
  });
});
