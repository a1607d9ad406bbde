import { TestingModule } from '@nestjs/testing';
import { MessagingTopologyMissingError } from 'nest-reliable-messaging';
import {
  ApprovalAlreadyUsedError,
  ApprovalMismatchError,
  ApprovalRequiredError,
  applyTopology,
  checkTopology,
  MessagingTopology,
  RedriveInProgressError,
  ReplayNotSupportedError,
  ReplayPlan,
  ReplayService,
  ReplayWindowError,
} from 'nest-reliable-messaging/redrive';
import {
  CliIo,
  MESSAGING_TRANSPORT,
  MessageTransport,
  runMessagingCli,
} from 'nest-reliable-messaging/testing';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { createMessagingApp } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage } from '../support/raw-messages';
import { useRabbitRedriveSuite } from './support/rabbit-redrive-suite';
import { VirtualPacing } from './support/virtual-pacing';

/**
 * Replay of a RabbitMQ destination's window from its journal (issue 40, item 3, "on RabbitMQ, replay from
 * the archive"): the services keep a journal of the destination (a stream queue bound to its exchange); a
 * replay of a window (by time, by the journal's offsets) reads it and publishes copies to one group's work
 * queue only, through the redrive's approval path and audit log, with the Kafka replay's inbox modes.
 */
describe('Replay a window on RabbitMQ', () => {
  const apps: TestingModule[] = [];
  let replays!: ReplayService;
  let schema!: TestSchema;
  // Before the suite's own: the services stop before their vhost is deleted.
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await replays?.close();
    await schema?.drop();
  });
  const suite = useRabbitRedriveSuite('replay_rabbit');
  const billingProbe = new ConsumerProbe();
  const mailProbe = new ConsumerProbe();
  let destination: string;
  let transport: MessageTransport;
  const billing = 'billing';
  const mail = 'mail';

  beforeAll(async () => {
    schema = await createTestSchema('replay_rabbit');
    destination = uniqueName('replay_orders');
    const url = suite.vhost.urlAs(suite.vhost.admin);
    for (const [group, probe] of [
      [billing, billingProbe],
      [mail, mailProbe],
    ] as const) {
      apps.push(
        await createMessagingApp({
          schema: schema.name,
          transport: { kind: 'rabbitmq', url, journals: { [destination]: { maxAge: '1h' } } },
          entities: [HandledOrder],
          providers: [
            { provide: ConsumerProbe, useValue: probe },
            ordersConsumer(orderPlaced(destination), group),
          ],
          // One at a time: the rows' order is the order of delivery.
          messaging: { relay: { enabled: false }, consumers: { concurrency: 1 } },
        }),
      );
    }
    transport = apps[0].get<MessageTransport>(MESSAGING_TRANSPORT);
    replays = suite.redrive.replays();
  });

  /** The group's handled seqs in the order it handled them. */
  const handled = async (group: string, seqs: readonly number[]) =>
    (
      await schema.query<{ seq: number }>(
        'select seq from handled_orders where consumer_group = $1 and seq = any($2) order by id',
        [group, seqs],
      )
    ).map((r) => r.seq);
  /** Publishes through the library's RabbitMQ publisher (which sets the AMQP timestamp), each confirmed. */
  const publish = async (seqs: readonly number[], to: string = destination) => {
    const outcomes = await transport.publish(
      seqs.map((seq) => orderMessage(to, { customer: `c${seq}`, seq })),
    );
    expect(outcomes.map((o) => o.status)).toEqual(seqs.map(() => 'CONFIRMED'));
  };
  /** Waits for the next whole second (message times are whole seconds) and gives it. */
  const nextSecond = async () => {
    const at = Math.ceil((Date.now() + 1) / 1000) * 1000;
    await new Promise((resolve) => setTimeout(resolve, at - Date.now() + 5));
    return new Date(at);
  };
  const settled = (group: string, seqs: readonly number[], expected: readonly number[]) =>
    eventually(async () => expect(await handled(group, seqs)).toEqual(expected));
  const approve = (plan: ReplayPlan, approver: 'jane' | 'bob' = 'jane', service = replays) =>
    service.approve(plan, suite.fixture.approval(plan as never, approver));
  const depth = async (queue: string) => {
    const channel = await suite.connection.createChannel();
    try {
      return (await channel.checkQueue(queue)).messageCount;
    } finally {
      await channel.close();
    }
  };

  it('the services declare the journal, a stream bound to the destination; topology apply declares and check verifies one', async () => {
    const channel = await suite.connection.createChannel();
    await channel.checkQueue(`${destination}:journal`);
    await channel.close();

    const other = uniqueName('replay_topology');
    const broker = { kind: 'rabbitmq' as const, url: suite.vhost.url };
    const credential = { principal: suite.vhost.admin.name, secret: suite.vhost.admin.password };
    const topology = { destinations: [other], groups: [], journals: [{ destination: other, maxAge: '7D' }] };
    expect(await checkTopology({ broker, credential }, topology)).toEqual([
      `exchange '${other}'`,
      `stream '${other}:journal'`,
    ]);
    await applyTopology({ broker, credential }, topology);
    expect(await checkTopology({ broker, credential }, topology)).toEqual([]);
    // It is a stream with the retention asked for: declaring it otherwise is refused by the broker.
    const probe = await suite.connection.createChannel();
    probe.on('error', () => undefined);
    await expect(
      probe.assertQueue(`${other}:journal`, {
        durable: true,
        arguments: { 'x-queue-type': 'stream', 'x-max-age': '1D' },
      }),
    ).rejects.toThrow(/inequivalent arg 'x-max-age'/);
    // Another retention than the topology's is reported as a mismatch.
    await expect(
      checkTopology(
        { broker, credential },
        { ...topology, journals: [{ destination: other, maxAge: '2D' }] },
      ),
    ).rejects.toThrow(/journal '.*:journal'.*x-max-age/);
  });

  it('a service in verify mode with a journal configured stops naming it, and starts once it is applied', async () => {
    const verified = uniqueName('replay_verify');
    const broker = { kind: 'rabbitmq' as const, url: suite.vhost.url };
    const credential = { principal: suite.vhost.admin.name, secret: suite.vhost.admin.password };
    const start = () =>
      createMessagingApp({
        schema: schema.name,
        transport: {
          kind: 'rabbitmq',
          url: suite.vhost.urlAs(suite.vhost.admin),
          journals: { [verified]: { maxAge: '1h' } },
        },
        entities: [HandledOrder],
        providers: [
          { provide: ConsumerProbe, useValue: new ConsumerProbe() },
          ordersConsumer(orderPlaced(verified), billing),
        ],
        messaging: { relay: { enabled: false }, topology: 'verify' },
      });
    const error = await start().then(
      (started) => {
        apps.push(started);
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MessagingTopologyMissingError);
    const message = (error as Error).message;
    expect(message).toContain(`stream '${verified}:journal'`);
    // The topology it names to apply holds the journal: applied as it is, the service starts.
    const named = /topology\.json holding (\{.*\})\. In local/.exec(message)?.[1] ?? '';
    const topology = JSON.parse(named) as MessagingTopology;
    expect(topology.journals).toEqual([{ destination: verified, maxAge: '1h' }]);
    await applyTopology({ broker, credential }, topology);
    apps.push(await start());
  });

  it('a window by time, inbox reprocess: only its messages, in order, to one group once per replay', async () => {
    await publish([1, 2, 3]);
    const from = await nextSecond();
    await publish([4, 5, 6]);
    const to = await nextSecond();
    await publish([7, 8]);
    const all = [1, 2, 3, 4, 5, 6, 7, 8];
    await settled(billing, all, all);
    await settled(mail, all, all);
    const mailCalls = mailProbe.invocations;

    const plan = await replays.plan({
      topic: destination,
      group: billing,
      from,
      to,
      inbox: 'reprocess',
      ratePerSecond: 50,
    });
    expect(plan).toMatchObject({
      kind: 'replay',
      transport: 'rabbitmq',
      source: destination,
      target: `${destination}.${billing}`,
      journal: `${destination}:journal`,
      group: billing,
      records: 3,
      window: { by: 'time', from: from.toISOString(), to: to.toISOString() },
    });
    const result = await replays.execute(await approve(plan));
    expect(result).toMatchObject({ replayId: plan.replayId, published: 3, skipped: 0, complete: true });
    await settled(billing, all, [...all, 4, 5, 6]);
    // The other group's queue got nothing: its consumer was not called again.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(mailProbe.invocations).toBe(mailCalls);
    expect(await handled(mail, all)).toEqual(all);
    expect(await depth(`${destination}.${mail}`)).toBe(0);

    const audit = (await suite.fixture.history(destination)).filter((e) => e.planHash === plan.hash);
    expect(audit.map((e) => [e.action, e.outcome])).toEqual([
      ['PLAN', 'PLANNED'],
      ['EXECUTE', 'STARTED'],
      ['EXECUTE', 'REPLAYED'],
    ]);
    expect(audit[0]).toMatchObject({ transport: 'rabbitmq', target: `${destination}.${billing}` });
    expect(audit[0].detail).toContain(`${destination}:journal`);

    // A second approval of the same plan publishes the window again, same replay id: the inbox drops it.
    expect(await replays.execute(await approve(plan, 'bob'))).toMatchObject({ published: 3, complete: true });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await handled(billing, all)).toEqual([...all, 4, 5, 6]);
  });

  it('inbox skip drops what the group handled and applies what it missed (a message it dead-lettered)', async () => {
    billingProbe.refuse.add(51); // AUTHORIZATION: straight to the DLQ
    const from = await nextSecond();
    await publish([51, 52, 53]);
    const to = await nextSecond();
    await eventually(async () => expect(await depth(`${destination}.${billing}.dlq`)).toBe(1));
    await settled(billing, [51, 52, 53], [52, 53]);
    await settled(mail, [51, 52, 53], [51, 52, 53]);
    billingProbe.refuse.delete(51);

    const plan = await replays.plan({ topic: destination, group: billing, from, to, inbox: 'skip' });
    expect(plan.records).toBe(3);
    expect(await replays.execute(await approve(plan))).toMatchObject({ published: 3, complete: true });
    await settled(billing, [51, 52, 53], [52, 53, 51]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await handled(billing, [51, 52, 53])).toEqual([52, 53, 51]);
    expect(await handled(mail, [51, 52, 53])).toEqual([51, 52, 53]);
  });

  it("a window by the journal's offsets; the rate bound holds (a virtual clock, and loosely in real time)", async () => {
    const virtual = new VirtualPacing();
    const paced = new ReplayService({
      broker: { kind: 'rabbitmq', url: suite.vhost.url },
      credential: { principal: suite.vhost.admin.name, secret: suite.vhost.admin.password },
      ledger: suite.fixture.ledger,
      approvers: suite.fixture.approvers,
      pacing: virtual.clock,
    });
    try {
      const seqs = Array.from({ length: 10 }, (_, i) => 61 + i);
      const from = await nextSecond();
      await publish(seqs);
      await settled(billing, seqs, seqs);
      // The journal's offsets of the ten, as a plan by time resolved them.
      const byTime = await replays.plan({
        topic: destination,
        group: billing,
        from,
        to: new Date(),
        inbox: 'skip',
      });
      expect(byTime.records).toBe(10);
      const offsets = byTime.partitions;
      const plan = await paced.plan({
        topic: destination,
        group: billing,
        offsets,
        inbox: 'reprocess',
        ratePerSecond: 4,
      });
      expect(plan).toMatchObject({ window: { by: 'offsets' }, partitions: offsets, records: 10 });
      const result = await paced.execute(await approve(plan, 'bob', paced));
      expect(result).toMatchObject({ published: 10, complete: true });
      expect(virtual.sleeps).toBe(9);
      expect(virtual.mostInOneSecond()).toBe(4);
      await settled(billing, seqs, [...seqs, ...seqs]);

      // In real time: 10 copies at 20/s take at least 9 intervals of 50 ms.
      const real = await replays.plan({
        topic: destination,
        group: billing,
        offsets,
        inbox: 'reprocess',
        ratePerSecond: 20,
      });
      const started = Date.now();
      expect(await replays.execute(await approve(real))).toMatchObject({ published: 10 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
      await settled(billing, seqs, [...seqs, ...seqs, ...seqs]);
    } finally {
      await paced.close();
    }
  });

  it('refuses to run without a second person, and records the refusal', async () => {
    const plan = await replays.plan({
      topic: destination,
      group: billing,
      offsets: [{ partition: 0, from: '0', to: '2' }],
      inbox: 'reprocess',
    });
    await expect(replays.approve(plan, undefined)).rejects.toThrow(ApprovalRequiredError);
    await expect(
      replays.approve(plan, suite.fixture.approval(plan as never, 'jane'), 'jane'),
    ).rejects.toThrow(ApprovalMismatchError);
    const outcomes = (await suite.fixture.history(destination))
      .filter((e) => e.planHash === plan.hash)
      .map((e) => e.outcome);
    expect(outcomes).toEqual(['PLANNED', 'APPROVAL', 'APPROVAL_MISMATCH']);
  });

  it('does not run beside another replay of the destination for the group', async () => {
    const plan = await replays.plan({
      topic: destination,
      group: billing,
      offsets: [{ partition: 0, from: '0', to: '2' }],
      inbox: 'reprocess',
    });
    const approved = await approve(plan);
    const before = await depth(`${destination}.${billing}`);
    await suite.fixture.ledger.withExclusiveHold('rabbitmq', `replay:${destination}:${billing}`, async () => {
      await expect(replays.execute(approved)).rejects.toThrow(RedriveInProgressError);
    });
    expect(await depth(`${destination}.${billing}`)).toBe(before);
    const outcomes = (await suite.fixture.history(destination))
      .filter((e) => e.planHash === plan.hash)
      .map((e) => e.outcome);
    expect(outcomes).toEqual(['PLANNED', 'IN_PROGRESS']);
  });

  it('stops at the first copy the broker does not confirm: INCOMPLETE, where it stopped, the approval spent', async () => {
    const seqs = [91, 92, 93];
    const from = await nextSecond();
    await publish(seqs);
    await settled(billing, seqs, seqs);
    // A group with no work queue: the first copy comes back unroutable (published mandatory).
    const plan = await replays.plan({
      topic: destination,
      group: 'nobody',
      from,
      to: new Date(),
      inbox: 'reprocess',
    });
    expect(plan.records).toBe(3);
    const approval = suite.fixture.approval(plan as never, 'jane');
    const result = await replays.execute(await replays.approve(plan, approval));
    const [window] = plan.partitions;
    expect(result).toMatchObject({ published: 0, complete: false });
    expect(result.partitions).toHaveLength(1);
    expect(result.partitions[0]).toMatchObject({ partition: 0, published: 0, next: window.from });
    // It names the queue that is not there (the copy goes through the default exchange by its name).
    expect(result.partitions[0].error).toContain(
      `REJECTED: RabbitMQ returned the message as unroutable: there is no queue '${destination}.nobody'`,
    );
    const entries = (await suite.fixture.history(destination)).filter((e) => e.planHash === plan.hash);
    expect(entries.map((e) => e.outcome)).toEqual(['PLANNED', 'STARTED', 'INCOMPLETE']);
    expect(entries[2].detail).toContain(`partition 0 stopped at ${window.from}: REJECTED`);
    // The approval ran once: given again, it is refused; nothing reached the groups that exist.
    await expect(replays.execute(await replays.approve(plan, approval))).rejects.toThrow(
      ApprovalAlreadyUsedError,
    );
    expect(await handled(billing, seqs)).toEqual(seqs);
    expect(await handled(mail, seqs)).toEqual(seqs);
  });

  it('a destination without a journal, and a window outside what the journal keeps, are refused clearly', async () => {
    const bare = uniqueName('replay_bare');
    const refusal = replays.plan({
      topic: bare,
      group: billing,
      from: new Date(0),
      to: new Date(),
      inbox: 'skip',
    });
    await expect(refusal).rejects.toThrow(ReplayNotSupportedError);
    await expect(refusal).rejects.toThrow(`the stream queue '${bare}:journal' does not exist`);
    await expect(refusal).rejects.toThrow(/nest-messaging topology apply/);

    // Beyond its end.
    await expect(
      replays.plan({
        topic: destination,
        group: billing,
        offsets: [{ partition: 0, from: '0', to: '100000' }],
        inbox: 'skip',
      }),
    ).rejects.toThrow(/partition 0 ends at \d+, before 100000/);
    // Before its first message: the journal did not exist yet.
    await expect(
      replays.plan({
        topic: destination,
        group: billing,
        from: new Date(Date.now() - 3_600_000),
        to: new Date(),
        inbox: 'skip',
      }),
    ).rejects.toThrow(/keeps messages from .* only/);

    // Retention deleted the start: a journal that keeps ~2 kB in segments of 1 kB.
    const short = uniqueName('replay_short');
    const channel = await suite.connection.createChannel();
    await channel.assertExchange(short, 'topic', { durable: true });
    await channel.assertQueue(`${short}:journal`, {
      durable: true,
      arguments: {
        'x-queue-type': 'stream',
        'x-max-length-bytes': 2000,
        'x-stream-max-segment-size-bytes': 1000,
      },
    });
    await channel.bindQueue(`${short}:journal`, short, '#');
    await channel.close();
    for (let seq = 0; seq < 30; seq++) await publish([1000 + seq], short);
    await expect(
      replays.plan({
        topic: short,
        group: billing,
        offsets: [{ partition: 0, from: '0', to: '1' }],
        inbox: 'skip',
      }),
    ).rejects.toThrow(/partition 0 keeps offsets from [1-9]\d* only \(retention deleted the ones before\)/);
    await expect(
      replays.plan({
        topic: short,
        group: billing,
        from: new Date(Date.now() - 60_000),
        to: new Date(),
        inbox: 'skip',
      }),
    ).rejects.toThrow(ReplayWindowError);
  });

  it('nest-messaging replay plan --destination | approve | run: the same steps from the CLI', async () => {
    const { fixture, vhost } = suite;
    fixture.admit(vhost.admin.name);
    const cli = async (args: string[]) => {
      let out = '';
      let err = '';
      const io: CliIo = {
        env: { ...fixture.cliEnv, MESSAGING_ADMIN_AMQP_URL: vhost.urlAs(vhost.admin) },
        out: (text) => void (out += text),
        err: (text) => void (err += text),
        cwd: fixture.folder,
        now: () => new Date(),
      };
      return { code: await runMessagingCli(args, io), out, err };
    };
    const seqs = [81, 82];
    const from = await nextSecond();
    await publish(seqs);
    const to = await nextSecond();
    await settled(billing, seqs, seqs);
    const window = ['--from', from.toISOString(), '--to', to.toISOString()];
    const plan = ['replay', 'plan', '--destination', destination, '--group', billing, ...window];
    const planned = await cli([
      ...plan,
      '--inbox',
      'reprocess',
      '--rate',
      '20',
      '--out',
      'rabbit-replay.json',
    ]);
    expect(planned).toMatchObject({ code: 0 });
    expect(planned.out).toContain(`${destination}:journal`);
    expect(planned.out).toContain(`2 records to group ${billing}, inbox reprocess, at most 20/s`);
    expect(planned.out).toContain(
      'Next, by an approver: nest-messaging replay approve --plan rabbit-replay.json',
    );
    // --topic and --destination together: a usage error.
    expect((await cli([...plan, '--topic', destination, '--inbox', 'skip'])).code).toBe(1);

    const approved = await cli([
      'replay',
      'approve',
      '--plan',
      'rabbit-replay.json',
      '--key',
      'bob.key.json',
    ]);
    expect(approved).toMatchObject({ code: 0 });
    const run = [
      'replay',
      'run',
      '--plan',
      'rabbit-replay.json',
      '--approval',
      'rabbit-replay.approval.json',
    ];
    const ran = await cli(run);
    expect(ran).toMatchObject({ code: 0 });
    expect(ran.out).toMatch(/2 published, 0 skipped/);
    await settled(billing, seqs, [81, 82, 81, 82]);
    expect(await handled(mail, seqs)).toEqual(seqs);
    expect((await cli(run)).code).toBe(2); // the approval ran once
  });
});
