import { rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TestingModule } from '@nestjs/testing';
import * as amqp from 'amqplib';
import { MessagingTopologyMissingError } from 'nest-reliable-messaging';
import { applyTopology } from 'nest-reliable-messaging/redrive';
import { CliIo, runMessagingCli } from 'nest-reliable-messaging/testing';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { depthOf } from '../redrive/support/parked-messages';
import { RabbitVhost } from '../redrive/support/rabbit-vhost';
import { createMessagingApp, rabbitTransport } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage } from '../support/raw-messages';
import { publishRaw } from '../support/rabbit-wire';

/**
 * Issue 15, point 7. With the permissions of docs/guide/08-redrive.md a service can delete nothing and declare nothing: not its
 * DLQ, and not a DLQ re-declared with `x-message-ttl: 0` that would confirm dead-letter copies and throw them
 * away. An admin declares the topology (`messaging topology apply`, idempotent); a service in `verify` mode
 * (the default) checks it at startup and stops with an error naming what is missing.
 */
describe('RabbitMQ topology declared by the admin, checked by the services', () => {
  const destination = uniqueName('topo_orders');
  const group = 'billing';
  const workQueue = `${destination}.${group}`;
  const dlq = `${workQueue}.dlq`;
  const probe = new ConsumerProbe();
  let vhost: RabbitVhost;
  let schema: TestSchema;
  let asService: amqp.ChannelModel;
  let asAdmin: amqp.ChannelModel;
  const apps: TestingModule[] = [];
  let topologyFile: string;

  const cli = async (args: string[], env: Record<string, string>) => {
    let err = '';
    const io: CliIo = {
      env,
      out: () => undefined,
      err: (text) => void (err += text),
      cwd: path.dirname(topologyFile),
    };
    return { code: await runMessagingCli(args, io), err };
  };
  const app = (topology: 'verify' | 'declare') =>
    createMessagingApp({
      schema: schema.name,
      transport: rabbitTransport(vhost.urlAs(vhost.service)),
      entities: [HandledOrder],
      providers: [
        { provide: ConsumerProbe, useValue: probe },
        ordersConsumer(orderPlaced(destination), group),
      ],
      messaging: { relay: { enabled: false }, topology },
    });

  beforeAll(async () => {
    vhost = await RabbitVhost.create('topology');
    schema = await createTestSchema('topology');
    asService = await amqp.connect(vhost.urlAs(vhost.service));
    asAdmin = await amqp.connect(vhost.urlAs(vhost.admin));
    topologyFile = path.join(os.tmpdir(), `${destination}.topology.json`);
    writeFileSync(
      topologyFile,
      JSON.stringify({
        destinations: [destination],
        groups: [{ group, destination, retryTiersMs: [1000, 5000] }],
      }),
    );
  });

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
    await asService?.close().catch(() => undefined);
    await asAdmin?.close().catch(() => undefined);
    await vhost?.delete();
    await schema?.drop();
    rmSync(topologyFile, { force: true });
  });

  // claim: C-19
  it('a service in verify mode stops at startup, naming what is missing and how to declare it', async () => {
    const error = await app('verify').then(
      (started) => {
        apps.push(started);
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MessagingTopologyMissingError);
    const message = (error as Error).message;
    expect(message).toContain(`exchange '${destination}'`);
    expect(message).toContain(`queue '${dlq}'`);
    expect(message).toContain('messaging topology apply');
  });

  it('a service credential cannot declare the topology itself, nor apply it', async () => {
    const topology = { destinations: [destination], groups: [{ group, destination, retryTiersMs: [] }] };
    const credential = { principal: vhost.service.name, secret: vhost.service.password };
    await expect(
      applyTopology({ broker: { kind: 'rabbitmq', url: vhost.url }, credential }, topology),
    ).rejects.toMatchObject({ code: 403 });
    const asServiceCli = await cli(['topology', 'apply', '--file', topologyFile], {
      MESSAGING_ADMIN_AMQP_URL: vhost.urlAs(vhost.service),
    });
    expect(asServiceCli.code).toBe(1);
    expect(asServiceCli.err).toMatch(/ACCESS.REFUSED/);
  });

  it('the admin applies it, twice without harm (idempotent)', async () => {
    const env = { MESSAGING_ADMIN_AMQP_URL: vhost.urlAs(vhost.admin) };
    expect((await cli(['topology', 'apply', '--file', topologyFile], env)).code).toBe(0);
    expect((await cli(['topology', 'apply', '--file', topologyFile], env)).code).toBe(0);
    expect((await cli(['topology', 'check', '--file', topologyFile], env)).code).toBe(0);
    for (const queue of [workQueue, dlq, `${workQueue}.retry.1000ms`, `${workQueue}.retry.5000ms`]) {
      expect(await depthOf(asAdmin, queue)).toBe(0);
    }
  });

  // claim: C-74
  it('a service credential can neither delete its DLQ nor re-declare it with x-message-ttl 0', async () => {
    const attempts: Record<string, (channel: amqp.Channel) => Promise<unknown>> = {
      delete: (c) => c.deleteQueue(dlq),
      'delete if empty': (c) => c.deleteQueue(dlq, { ifEmpty: true }),
      're-declare with x-message-ttl 0': (c) =>
        c.assertQueue(dlq, { durable: true, arguments: { 'x-message-ttl': 0 } }),
      're-declare as it is': (c) => c.assertQueue(dlq, { durable: true }),
      purge: (c) => c.purgeQueue(dlq),
      get: (c) => c.get(dlq),
      'unbind its work queue': (c) => c.unbindQueue(workQueue, destination, '#'),
      'delete its exchange': (c) => c.deleteExchange(destination),
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
  });

  it('the service, in verify mode, starts and dead-letters into the DLQ the admin declared', async () => {
    apps.push(await app('verify'));
    probe.alwaysFail.add(1);
    await publishRaw(asService, [orderMessage(destination, { customer: 'c1', seq: 1 })]);
    await eventually(async () => expect(await depthOf(asAdmin, dlq)).toBe(1));
    expect(await depthOf(asAdmin, workQueue)).toBe(0);
  });
});
