import { Logger } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import * as amqp from 'amqplib';
import { RetryMode, RetryPolicyOptions } from 'nest-reliable-messaging';
import { applyTopology, checkTopology } from 'nest-reliable-messaging/redrive';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { createMessagingApp, rabbitTransport } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage } from '../support/raw-messages';
import { publishRaw } from '../support/rabbit-wire';
import { depthOf } from './support/parked-messages';
import { RabbitVhost, servicePermissions, VhostUser } from './support/rabbit-vhost';

/** One retry through the broker (TTL tiers of 100 and 200 ms), then the DLQ. */
const POLICY: RetryPolicyOptions = {
  maxAttempts: 2,
  mode: RetryMode.BROKER_DELAYED,
  backoff: { initialDelayMs: 200, multiplier: 1, maxDelayMs: 200 },
};
const RETRY_TIERS_MS = [100, 200];

/**
 * What a publish as `connection`'s user to `exchange` with `routingKey` came to: `confirmed` (routed, or
 * dropped without `mandatory`), `returned` (no queue bound for it), or the reply code the broker closed the
 * channel with (403: ACCESS_REFUSED).
 */
async function publishAs(
  connection: amqp.ChannelModel,
  exchange: string,
  routingKey: string,
): Promise<'confirmed' | 'returned' | number> {
  const channel = await connection.createConfirmChannel();
  const outcome = await new Promise<'confirmed' | 'returned' | number>((resolve) => {
    let returned = false;
    channel.on('error', (error: { code?: number }) => resolve(error.code ?? -1));
    channel.on('return', () => (returned = true));
    channel.publish(exchange, routingKey, Buffer.from('{"planted":true}'), { mandatory: true }, (error) => {
      if (!error) resolve(returned ? 'returned' : 'confirmed');
    });
  });
  await channel.close().catch(() => undefined);
  return outcome;
}

/**
 * Issue 45, finding 8: guide 08's recipe gives each service write on its destination exchanges and its
 * groups' failure exchanges only, and read on its work queues only; no `amq.default`. With it a service
 * still retries and dead-letters its own messages, and can reach no other queue of the vhost.
 */
describe('RabbitMQ services with permissions of their own (guide 08’s recipe, no amq.default)', () => {
  const destination = uniqueName('sp_orders');
  const billing = uniqueName('billing'); // the service under test
  const shipping = uniqueName('shipping'); // another service's group on the same destination
  const queues = {
    work: `${destination}.${billing}`,
    dlq: `${destination}.${billing}.dlq`,
    otherWork: `${destination}.${shipping}`,
    otherDlq: `${destination}.${shipping}.dlq`,
    otherArchive: `${destination}.${shipping}.dlq.archive`,
  };
  const probe = new ConsumerProbe();
  let vhost: RabbitVhost;
  let schema: TestSchema;
  let service: VhostUser;
  let app: TestingModule | undefined;
  let asService: amqp.ChannelModel;
  let asAdmin: amqp.ChannelModel;

  beforeAll(async () => {
    vhost = await RabbitVhost.create('svc_perms');
    schema = await createTestSchema('svc_perms');
    service = await vhost.addUser(
      'billing',
      servicePermissions({ publishes: [destination], consumes: [{ destination, group: billing }] }),
    );
    await applyTopology(
      {
        broker: { kind: 'rabbitmq', url: vhost.url },
        credential: { principal: vhost.admin.name, secret: vhost.admin.password },
      },
      {
        destinations: [destination],
        groups: [
          { group: billing, destination, retryTiersMs: RETRY_TIERS_MS },
          { group: shipping, destination, retryTiersMs: [] },
        ],
      },
    );
    asService = await amqp.connect(vhost.urlAs(service));
    asAdmin = await amqp.connect(vhost.urlAs(vhost.admin));
    const admin = await asAdmin.createChannel();
    await admin.assertQueue(queues.otherArchive, { durable: true }); // as `dlq discard` makes it
    await admin.close();
    app = await createMessagingApp({
      schema: schema.name,
      transport: rabbitTransport(vhost.urlAs(service)),
      entities: [HandledOrder],
      providers: [
        { provide: ConsumerProbe, useValue: probe },
        ordersConsumer(orderPlaced(destination), billing, POLICY),
      ],
      messaging: { relay: { enabled: false }, topology: 'verify' },
    });
  });

  afterAll(async () => {
    await app?.close();
    await asService?.close().catch(() => undefined);
    await asAdmin?.close().catch(() => undefined);
    await vhost?.delete();
    await schema?.drop();
  });

  const handled = () =>
    schema.query<{ seq: number; attempt: number }>(
      'select seq, attempt from handled_orders where consumer_group = $1 order by seq',
      [billing],
    );

  // Fails before failure exchanges: the copies went through amq.default, which this recipe does not grant.
  // claim: C-115
  it('retries its own messages through a retry queue and dead-letters them into its DLQ', async () => {
    probe.failUntilAttempt.set(1, 2);
    probe.alwaysFail.add(2);
    await publishRaw(
      asService,
      [1, 2].map((seq) => orderMessage(destination, { customer: 'c', seq })),
    );

    await eventually(async () => expect(await handled()).toEqual([{ seq: 1, attempt: 2 }]));
    await eventually(async () => expect(await depthOf(asAdmin, queues.dlq)).toBe(1));
  });

  // claim: C-115
  it('is refused publishing into another group’s DLQ and work queue, an archive, or through amq.default', async () => {
    const otherFailures = `${destination}.${shipping}.failures`;
    const attempts: Record<string, [string, string]> = {
      'amq.default → its own DLQ': ['', queues.dlq],
      'amq.default → another group’s DLQ': ['', queues.otherDlq],
      'amq.default → another group’s work queue': ['', queues.otherWork],
      'amq.default → an archive': ['', queues.otherArchive],
      'another group’s failure exchange → its DLQ': [otherFailures, queues.otherDlq],
      'amq.direct → another group’s DLQ': ['amq.direct', queues.otherDlq],
    };
    const reached = [queues.dlq, queues.otherDlq, queues.otherWork, queues.otherArchive];
    const depths = async () => Promise.all(reached.map((queue) => depthOf(asAdmin, queue)));
    const before = await depths(); // the other group's work queue holds the orders published above
    const outcomes: Record<string, unknown> = {};
    for (const [name, [exchange, routingKey]] of Object.entries(attempts)) {
      outcomes[name] = await publishAs(asService, exchange, routingKey);
    }
    expect(outcomes).toEqual(Object.fromEntries(Object.keys(attempts).map((name) => [name, 403])));
    expect(await depths()).toEqual(before);
  });

  // claim: C-115
  it('reaches through its own failure exchange its retry queues and DLQ only, not its work queue', async () => {
    const failures = `${destination}.${billing}.failures`;
    // Its work queue is not bound: a copy cannot skip a retry's wait, nor pass as one (x-death).
    expect(await publishAs(asService, failures, queues.work)).toBe('returned');
    expect(await publishAs(asService, failures, queues.otherDlq)).toBe('returned');
  });

  // claim: C-115
  it('cannot read or purge another group’s work queue, nor its own DLQ', async () => {
    const attempts: Record<string, (channel: amqp.Channel) => Promise<unknown>> = {
      'get another group’s work queue': (c) => c.get(queues.otherWork),
      'purge another group’s work queue': (c) => c.purgeQueue(queues.otherWork),
      'consume another group’s work queue': (c) => c.consume(queues.otherWork, () => undefined),
      'get its DLQ': (c) => c.get(queues.dlq),
      'purge its DLQ': (c) => c.purgeQueue(queues.dlq),
    };
    const outcomes: Record<string, unknown> = {};
    for (const [name, attempt] of Object.entries(attempts)) {
      const channel = await asService.createChannel();
      channel.on('error', () => undefined);
      outcomes[name] = await attempt(channel).then(
        () => 'allowed',
        (error: { code?: number }) => error.code,
      );
      await channel.close().catch(() => undefined);
    }
    expect(outcomes).toEqual(Object.fromEntries(Object.keys(attempts).map((name) => [name, 403])));
    expect(await depthOf(asAdmin, queues.dlq)).toBe(1);
  });
});

/**
 * An existing deployment, its topology declared by a version before failure exchanges: the same queue
 * arguments (none changes, so no PRECONDITION_FAILED), no failure exchange. The upgraded service starts and
 * dead-letters through the default exchange as before; the admin applies the topology again over the old
 * queues; restarted, the service dead-letters through its failure exchange, and amq.default can be dropped.
 */
describe('Upgrading a RabbitMQ deployment declared before failure exchanges', () => {
  const destination = uniqueName('up_orders');
  const group = uniqueName('billing');
  const work = `${destination}.${group}`;
  const dlq = `${work}.dlq`;
  const retry = `${work}.retry.100ms`;
  const probe = new ConsumerProbe();
  const topology = { destinations: [destination], groups: [{ group, destination, retryTiersMs: [100] }] };
  let vhost: RabbitVhost;
  let schema: TestSchema;
  let service: VhostUser;
  let asAdmin: amqp.ChannelModel;
  const apps: TestingModule[] = [];

  const admin = () => ({
    broker: { kind: 'rabbitmq' as const, url: vhost.url },
    credential: { principal: vhost.admin.name, secret: vhost.admin.password },
  });
  const start = async () => {
    const started = await createMessagingApp({
      schema: schema.name,
      transport: rabbitTransport(vhost.urlAs(service)),
      entities: [HandledOrder],
      providers: [
        { provide: ConsumerProbe, useValue: probe },
        ordersConsumer(orderPlaced(destination), group),
      ],
      messaging: { relay: { enabled: false }, topology: 'verify' },
    });
    apps.push(started);
    return started;
  };
  const parkOne = async (seq: number) => {
    probe.alwaysFail.add(seq);
    const before = await depthOf(asAdmin, dlq);
    await publishRaw(asAdmin, [orderMessage(destination, { customer: 'c', seq })]);
    await eventually(async () => expect(await depthOf(asAdmin, dlq)).toBe(before + 1));
  };

  beforeAll(async () => {
    vhost = await RabbitVhost.create('upgrade');
    schema = await createTestSchema('upgrade');
    const roles = { publishes: [destination], consumes: [{ destination, group }] };
    const [configure, , read] = servicePermissions(roles);
    // The recipe before failure exchanges: write on amq.default.
    service = await vhost.addUser('billing', [configure, `^(amq\\.default|${destination})$`, read]);
    asAdmin = await amqp.connect(vhost.urlAs(vhost.admin));
    // As the version before declared it (classic queues; the retry tier dead-letters back to the work queue).
    const channel = await asAdmin.createChannel();
    await channel.assertExchange(destination, 'topic', { durable: true });
    await channel.assertQueue(work, { durable: true, arguments: {} });
    await channel.assertQueue(retry, {
      durable: true,
      arguments: {
        'x-message-ttl': 100,
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': work,
      },
    });
    await channel.assertQueue(dlq, { durable: true, arguments: {} });
    await channel.bindQueue(work, destination, '#');
    await channel.close();
  });

  afterAll(async () => {
    for (const app of apps) await app.close().catch(() => undefined);
    await asAdmin?.close().catch(() => undefined);
    await vhost?.delete();
    await schema?.drop();
  });

  // claim: C-115
  it('the upgraded service starts over the old topology and dead-letters through amq.default, as before', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    await start();
    const warnings = warn.mock.calls.map(([message]) => String(message));
    warn.mockRestore();
    expect(warnings.find((w) => w.includes(`Exchange '${destination}.${group}.failures'`))).toContain(
      'nest-messaging topology apply',
    );
    await parkOne(1);
    expect(await checkTopology(admin(), topology)).toEqual([`exchange '${destination}.${group}.failures'`]);
  });

  // claim: C-115
  it('the admin applies the topology over the old queues; restarted under the new recipe, it needs no amq.default', async () => {
    await applyTopology(admin(), topology); // no PRECONDITION_FAILED: the queues' arguments did not change
    expect(await checkTopology(admin(), topology)).toEqual([]);
    await apps.pop()?.close();
    await vhost.setPermissions(
      service,
      servicePermissions({ publishes: [destination], consumes: [{ destination, group }] }),
    );
    await start();
    await parkOne(2);
    expect(await depthOf(asAdmin, retry)).toBe(0);
  });
});
