import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { TestingModule } from '@nestjs/testing';
import { Admin } from 'kafkajs';
import {
  ApprovalAlreadyUsedError,
  ApprovalMismatchError,
  ApprovalRequiredError,
  REPLAY_ID_HEADER,
  REPLAY_OF_HEADER,
  RedriveHeaders,
  RedriveInProgressError,
  ReplayPlan,
  ReplayService,
} from 'nest-reliable-messaging/redrive';
import { CliIo, runMessagingCli } from 'nest-reliable-messaging/testing';
import { eventually } from '../../harness/eventually';
import { infraEnv } from '../../harness/infra';
import { KafkaTopics, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { committedTotal, RawKafkaProducer } from '../support/kafka-wire';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage } from '../support/raw-messages';
import { TopicReader } from '../support/topic-reader';
import { RedriveFixture } from './support/redrive-fixture';
import { VirtualPacing } from './support/virtual-pacing';

/**
 * Replay of a Kafka topic's window (issue 40, item 3): two groups read a topic; a replay of a window (by
 * time, by offsets) goes to one of them only, through the redrive's approval path and audit log; `skip`
 * leaves the group's inbox to drop what it handled, `reprocess` applies the records again once per replay,
 * however often the plan runs; the rate is counted on a virtual clock.
 */
describe('Replay a window on Kafka', () => {
  const kafka = testKafka();
  const topics = new KafkaTopics(kafka);
  const raw = new RawKafkaProducer(kafka);
  const admin: Admin = kafka.admin();
  const broker = { kind: 'kafka' as const, brokers: infraEnv().kafkaBrokers, allowPlaintextLocal: true };
  const credential = { principal: 'replay-admin', secret: 'test-secret' };
  const apps: TestingModule[] = [];
  const groups: string[] = [];
  let schema: TestSchema;
  let fixture: RedriveFixture;
  let replays: ReplayService;
  let topic: string;
  let billing: string;
  let mail: string;
  const billingProbe = new ConsumerProbe();

  beforeAll(async () => {
    schema = await createTestSchema('replay_kafka');
    fixture = await RedriveFixture.create('replay_kafka');
    replays = fixture.service(broker, credential).replays();
    await admin.connect();
    topic = await topics.create(uniqueName('replay_orders'), 2);
    billing = uniqueName('replay_billing');
    mail = uniqueName('replay_mail');
    groups.push(billing, mail);
    topics.track(`${topic}.${billing}.dlq`, `${topic}.${mail}.dlq`);
    for (const group of [billing, mail]) {
      apps.push(
        await createMessagingApp({
          schema: schema.name,
          transport: kafkaTransport(),
          entities: [HandledOrder],
          providers: [
            { provide: ConsumerProbe, useValue: group === billing ? billingProbe : new ConsumerProbe() },
            ordersConsumer(orderPlaced(topic), group),
          ],
          messaging: { relay: { enabled: false }, consumers: { concurrency: 3 } },
        }),
      );
    }
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await replays.close();
    await fixture.close();
    await raw.stop();
    await admin.deleteGroups(groups).catch(() => undefined);
    await admin.disconnect();
    await topics.cleanup();
    await schema.drop();
  });

  const handledSeqs = async (group: string, seqs: readonly number[]) =>
    (
      await schema.query<{ seq: number }>(
        'select seq from handled_orders where consumer_group = $1 and seq = any($2) order by seq',
        [group, seqs],
      )
    ).map((r) => r.seq);
  const topicTotal = async () =>
    (await admin.fetchTopicOffsets(topic)).reduce((s, p) => s + Number(p.high), 0);
  /** Both groups settled every record of the topic: nothing more is coming. */
  const settled = async () => {
    const total = await topicTotal();
    await eventually(async () => {
      expect(await committedTotal(kafka, billing, topic)).toBe(total);
      expect(await committedTotal(kafka, mail, topic)).toBe(total);
    });
  };
  const send = (seqs: readonly number[], partition?: number) =>
    raw.send(
      seqs.map((seq) => orderMessage(topic, { customer: `c${seq}`, seq })),
      partition,
    );
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const approve = (plan: ReplayPlan, approver: 'jane' | 'bob' = 'jane') =>
    replays.approve(plan, fixture.approval(plan as never, approver));

  it('a window by time, inbox skip: the copies reach one group, whose inbox drops what it handled', async () => {
    await send([1, 2, 3]);
    await pause(50);
    const from = new Date();
    await pause(50);
    await send([4, 5, 6]);
    await pause(50);
    const to = new Date();
    await pause(50);
    await send([7, 8]);
    await settled();
    const all = [1, 2, 3, 4, 5, 6, 7, 8];
    expect(await handledSeqs(billing, all)).toEqual(all);
    expect(await handledSeqs(mail, all)).toEqual(all);

    const plan = await replays.plan({ topic, group: billing, from, to, inbox: 'skip', ratePerSecond: 50 });
    expect(plan).toMatchObject({ kind: 'replay', source: topic, target: topic, group: billing, records: 3 });
    expect(plan.window).toEqual({ by: 'time', from: from.toISOString(), to: to.toISOString() });
    const before = await topicTotal();
    const result = await replays.execute(await approve(plan));
    expect(result).toMatchObject({ replayId: plan.replayId, published: 3, skipped: 0, complete: true });
    expect(await topicTotal()).toBe(before + 3);
    await settled();
    // Handled once each, by each group: billing's inbox dropped the copies, mail skipped them.
    expect(await handledSeqs(billing, all)).toEqual(all);
    expect(await handledSeqs(mail, all)).toEqual(all);

    const reader = await new TopicReader(topic, kafka).start();
    const records = await reader.waitFor(before + 3);
    await reader.stop();
    const copies = records.filter((r) => r.headers[REPLAY_ID_HEADER] === plan.replayId);
    expect(copies.map((c) => (JSON.parse(c.value) as { seq: number }).seq).sort()).toEqual([4, 5, 6]);
    for (const copy of copies) {
      expect(copy.headers[RedriveHeaders.REDRIVE_GROUP]).toBe(billing);
      expect(copy.headers[RedriveHeaders.REDRIVE_ID]).toBe('');
    }

    const audit = (await fixture.history(topic)).filter((e) => e.planHash === plan.hash);
    expect(audit.map((e) => [e.action, e.outcome])).toEqual([
      ['PLAN', 'PLANNED'],
      ['EXECUTE', 'STARTED'],
      ['EXECUTE', 'REPLAYED'],
    ]);
    expect(audit[0]).toMatchObject({ actor: 'replay-admin', target: topic });
    expect(audit[0].detail).toContain(`replay ${plan.replayId}`);
    expect(audit[2]).toMatchObject({ approver: 'jane', redriveId: result.executionId });
    expect(audit[2].evidence?.nonce).toBeDefined();
  });

  it('inbox skip applies what the group never handled: a record it dead-lettered, once', async () => {
    billingProbe.refuse.add(51); // AUTHORIZATION: straight to the DLQ
    const [p1] = (await admin.fetchTopicOffsets(topic)).filter((p) => p.partition === 1);
    await send([51, 52], 1);
    const dlq = `${topic}.${billing}.dlq`;
    await eventually(async () =>
      expect((await admin.fetchTopicOffsets(dlq)).reduce((n, p) => n + Number(p.high), 0)).toBe(1),
    );
    await settled();
    expect(await handledSeqs(billing, [51, 52])).toEqual([52]);
    billingProbe.refuse.delete(51);

    const offsets = [{ partition: 1, from: p1.high, to: (BigInt(p1.high) + 2n).toString() }];
    const plan = await replays.plan({ topic, group: billing, offsets, inbox: 'skip' });
    expect(await replays.execute(await approve(plan))).toMatchObject({ published: 2, complete: true });
    await settled();
    expect(await handledSeqs(billing, [51, 52])).toEqual([51, 52]);
    expect(await handledSeqs(mail, [51, 52])).toEqual([51, 52]);
  });

  it('a window by offsets, inbox reprocess: applied again once per replay, however often it runs', async () => {
    const [p0] = (await admin.fetchTopicOffsets(topic)).filter((p) => p.partition === 0);
    const start = BigInt(p0.high);
    const seqs = [11, 12, 13, 14];
    await send(seqs, 0);
    await settled();
    expect(await handledSeqs(billing, seqs)).toEqual(seqs);

    const offsets = [{ partition: 0, from: start.toString(), to: (start + 4n).toString() }];
    const plan = await replays.plan({
      topic,
      group: billing,
      offsets,
      inbox: 'reprocess',
      ratePerSecond: 100,
    });
    expect(plan).toMatchObject({ window: { by: 'offsets' }, partitions: offsets, records: 4 });
    const approved = await approve(plan);
    expect(await replays.execute(approved)).toMatchObject({ published: 4, complete: true });
    await settled();
    const twice = seqs.flatMap((s) => [s, s]);
    expect(await handledSeqs(billing, seqs)).toEqual(twice);
    expect(await handledSeqs(mail, seqs)).toEqual(seqs);
    // The copies are new messages to the inbox, each naming the record it copies.
    const reader = await new TopicReader(topic, kafka).start();
    const records = await reader.waitFor(await topicTotal());
    await reader.stop();
    const originals = records.filter((r) => r.partition === 0 && BigInt(r.offset) >= start).slice(0, 4);
    const copies = records.filter((r) => r.headers[REPLAY_ID_HEADER] === plan.replayId);
    const ids = (list: typeof records, header: string) => list.map((r) => r.headers[header]).sort();
    expect(ids(copies, REPLAY_OF_HEADER)).toEqual(ids(originals, 'msg.id'));
    expect(ids(copies, 'msg.id').filter((id) => ids(originals, 'msg.id').includes(id))).toEqual([]);

    // The same approval runs once.
    await expect(replays.execute(await replays.approve(plan, approved.approval))).rejects.toThrow(
      ApprovalAlreadyUsedError,
    );
    // A second approval of the same plan (a resume after a crash, say) publishes the window again, under
    // the same replay id: the inbox drops all of it.
    expect(await replays.execute(await approve(plan, 'bob'))).toMatchObject({ published: 4 });
    await settled();
    expect(await handledSeqs(billing, seqs)).toEqual(twice);
    expect(await handledSeqs(mail, seqs)).toEqual(seqs);
  });

  it('refuses to run without a second person, and records the refusal', async () => {
    const [p1] = (await admin.fetchTopicOffsets(topic)).filter((p) => p.partition === 1);
    const offsets = [{ partition: 1, from: p1.low, to: p1.high }];
    const plan = await replays.plan({ topic, group: billing, offsets, inbox: 'reprocess' });
    await expect(replays.approve(plan, undefined)).rejects.toThrow(ApprovalRequiredError);
    // The approver executing their own approval: four eyes.
    await expect(replays.approve(plan, fixture.approval(plan as never, 'jane'), 'jane')).rejects.toThrow(
      ApprovalMismatchError,
    );
    const refusals = (await fixture.history(topic)).filter(
      (e) => e.planHash === plan.hash && e.action === 'REFUSE',
    );
    expect(refusals.map((e) => e.outcome)).toEqual(['APPROVAL', 'APPROVAL_MISMATCH']);
    expect(refusals.every((e) => e.detail?.startsWith('EXECUTE: '))).toBe(true);
    // Nothing ran: no STARTED entry for the plan.
    expect(
      (await fixture.history(topic)).filter((e) => e.planHash === plan.hash).map((e) => e.outcome),
    ).toEqual(['PLANNED', 'APPROVAL', 'APPROVAL_MISMATCH']);
  });

  it('does not run beside another replay of the topic for the group', async () => {
    const [p0] = (await admin.fetchTopicOffsets(topic)).filter((p) => p.partition === 0);
    const offsets = [{ partition: 0, from: p0.low, to: p0.high }];
    const plan = await replays.plan({ topic, group: billing, offsets, inbox: 'skip' });
    const approved = await approve(plan);
    const before = await topicTotal();
    await fixture.ledger.withExclusiveHold('kafka', `replay:${topic}:${billing}`, async () => {
      await expect(replays.execute(approved)).rejects.toThrow(RedriveInProgressError);
    });
    expect(await topicTotal()).toBe(before);
    const outcomes = (await fixture.history(topic))
      .filter((e) => e.planHash === plan.hash)
      .map((e) => e.outcome);
    expect(outcomes).toEqual(['PLANNED', 'IN_PROGRESS']);
  });

  it('publishes no more copies per second than the plan allows (counted on a virtual clock)', async () => {
    const virtual = new VirtualPacing();
    const paced = new ReplayService({
      broker,
      credential,
      ledger: fixture.ledger,
      approvers: fixture.approvers,
      pacing: virtual.clock,
    });
    try {
      const [p1] = (await admin.fetchTopicOffsets(topic)).filter((p) => p.partition === 1);
      const seqs = Array.from({ length: 10 }, (_, i) => 21 + i);
      await send(seqs, 1);
      await settled();
      const offsets = [{ partition: 1, from: p1.high, to: (BigInt(p1.high) + 10n).toString() }];
      const plan = await paced.plan({ topic, group: billing, offsets, inbox: 'skip', ratePerSecond: 4 });
      const before = await topicTotal();
      const result = await paced.execute(await paced.approve(plan, fixture.approval(plan as never, 'bob')));
      expect(result.published).toBe(10);
      expect(await topicTotal()).toBe(before + 10);
      // The first copy goes at once, each other one after a wait: 10 admissions at virtual times.
      expect(virtual.sleeps).toBe(9);
      expect(virtual.mostInOneSecond()).toBe(4);
      await settled();
      expect(await handledSeqs(billing, seqs)).toEqual(seqs);
    } finally {
      await paced.close();
    }
  });

  it('nest-messaging replay plan | approve | run: the same steps from the CLI, each approval once', async () => {
    fixture.admit('ops-local');
    const cli = async (args: string[]) => {
      let out = '';
      let err = '';
      const io: CliIo = {
        env: {
          ...fixture.cliEnv,
          MESSAGING_ADMIN_KAFKA_BROKERS: infraEnv().kafkaBrokers.join(','),
          MESSAGING_ADMIN_PRINCIPAL: 'ops-local',
        },
        out: (text) => void (out += text),
        err: (text) => void (err += text),
        cwd: fixture.folder,
        now: () => new Date(),
      };
      return { code: await runMessagingCli(args, io), out, err };
    };
    const [p0] = (await admin.fetchTopicOffsets(topic)).filter((p) => p.partition === 0);
    const seqs = [41, 42];
    await send(seqs, 0);
    await settled();
    const window = `0:${p0.high}-${BigInt(p0.high) + 2n}`;
    const planned = await cli([
      'replay',
      'plan',
      '--local-plaintext',
      '--topic',
      topic,
      '--group',
      billing,
      '--offsets',
      window,
      '--inbox',
      'reprocess',
      '--rate',
      '20',
      '--out',
      'replay.json',
    ]);
    expect(planned).toMatchObject({ code: 0 });
    expect(planned.out).toContain(`2 records to group ${billing}, inbox reprocess, at most 20/s`);
    expect(planned.out).toContain('Next, by an approver: nest-messaging replay approve --plan replay.json');
    expect(
      (
        await cli([
          'replay',
          'plan',
          '--local-plaintext',
          '--topic',
          topic,
          '--group',
          billing,
          '--inbox',
          'twice',
        ])
      ).code,
    ).toBe(1);

    const approved = await cli([
      'replay',
      'approve',
      '--plan',
      'replay.json',
      '--key',
      'bob.key.json',
      '--local-plaintext',
    ]);
    expect(approved).toMatchObject({ code: 0 });
    expect(approved.out).toContain(
      'nest-messaging replay run --plan replay.json --approval replay.approval.json',
    );
    const run = [
      'replay',
      'run',
      '--plan',
      'replay.json',
      '--approval',
      'replay.approval.json',
      '--local-plaintext',
    ];
    const ran = await cli(run);
    expect(ran).toMatchObject({ code: 0 });
    expect(ran.out).toMatch(/2 published, 0 skipped/);
    await settled();
    expect(await handledSeqs(billing, seqs)).toEqual([41, 41, 42, 42]);
    expect(await handledSeqs(mail, seqs)).toEqual(seqs);
    // The approval ran once: a guard refuses the second run (exit 2).
    const again = await cli(run);
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/Refused: .*already/i);
    const plan = JSON.parse(readFileSync(path.join(fixture.folder, 'replay.json'), 'utf8')) as ReplayPlan;
    const outcomes = (await fixture.history(topic))
      .filter((e) => e.planHash === plan.hash)
      .map((e) => e.outcome);
    expect(outcomes).toEqual(['PLANNED', 'APPROVED', 'STARTED', 'REPLAYED', 'APPROVAL_USED']);
  });
});
