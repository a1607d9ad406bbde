import * as amqp from 'amqplib';
import { Admin } from 'kafkajs';
import {
  ApprovalAlreadyUsedError,
  RedrivePlanStaleError,
  RedriveInProgressError,
  RedriveResult,
} from 'nest-reliable-messaging/redrive';
import { infraEnv } from '../../harness/infra';
import { KafkaTopics, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { RawKafkaProducer } from '../support/kafka-wire';
import { declareGroupQueues, depthOf, parkedOrder, sendToQueues } from './support/parked-messages';
import { RabbitVhost } from './support/rabbit-vhost';
import { RedriveFixture } from './support/redrive-fixture';

/**
 * Issue 15, points 2 and 3: an approval works once, across processes (its nonce is recorded when it is
 * executed); two redrives of one DLQ never both publish (an exclusive hold in the admin database, taken
 * before the DLQ is read again); every step is in the audit log.
 */
describe('Redrive: one-shot approvals, one redrive of a DLQ at a time, an audit log', () => {
  const kafka = testKafka();
  const topics = new KafkaTopics(kafka);
  const raw = new RawKafkaProducer(kafka);
  const admin: Admin = kafka.admin();
  let vhost: RabbitVhost;
  let connection: amqp.ChannelModel;
  let fixture: RedriveFixture;
  /** The redrive groups the suite made, deleted after. */
  const groups: string[] = [];
  const kafkaBroker = { kind: 'kafka' as const, brokers: infraEnv().kafkaBrokers, allowPlaintextLocal: true };
  /** Each call: a new service, as a new CLI process would build. */
  const kafkaAdmin = () => fixture.service(kafkaBroker, { principal: 'ops-carol', secret: 'x' });
  const rabbitAdmin = () =>
    fixture.service(
      { kind: 'rabbitmq', url: vhost.url },
      { principal: vhost.admin.name, secret: vhost.admin.password },
    );

  beforeAll(async () => {
    fixture = await RedriveFixture.create('one_at_a_time');
    vhost = await RabbitVhost.create('one_at_a_time');
    connection = await amqp.connect(vhost.urlAs(vhost.admin));
    await admin.connect();
  });

  afterAll(async () => {
    await raw.stop();
    await admin.deleteGroups(groups).catch(() => undefined);
    await admin.disconnect();
    await topics.cleanup();
    await connection?.close().catch(() => undefined);
    await vhost?.delete();
    await fixture?.close();
  });

  // claim: C-65
  it('refuses an approval executed before, in another process, even when nothing moved the first time', async () => {
    const destination = uniqueName('once');
    const workQueue = `${destination}.billing`;
    const dlq = `${workQueue}.dlq`;
    await declareGroupQueues(connection, workQueue);
    const channel = await connection.createChannel();
    await channel.deleteQueue(workQueue); // the target refuses everything: the first run moves nothing
    await channel.assertQueue(workQueue, {
      arguments: { 'x-max-length': 0, 'x-overflow': 'reject-publish' },
    });
    await channel.close();
    await sendToQueues(connection, [
      parkedOrder(destination, 'billing', 1),
      parkedOrder(destination, 'billing', 2),
    ]);

    const first = rabbitAdmin();
    const plan = await first.plan({ source: dlq });
    const approval = fixture.approval(plan);
    expect(await first.execute(await first.approve(plan, approval))).toMatchObject({
      redriven: 0,
      leftInSource: 2,
    });

    const second = rabbitAdmin(); // another process, same approval file
    await expect(second.execute(await second.approve(plan, approval))).rejects.toThrow(
      ApprovalAlreadyUsedError,
    );
    expect(await depthOf(connection, dlq)).toBe(2);
    const log = (await fixture.history(dlq)).map((e) => `${e.action}:${e.outcome}`);
    expect(log).toEqual(['PLAN:PLANNED', 'EXECUTE:STARTED', 'EXECUTE:INCOMPLETE', 'REFUSE:APPROVAL_USED']);
  });

  // claim: C-66
  it('lets only one of two simultaneous redrives of a Kafka DLQ publish; the offset only moves forward', async () => {
    const destination = uniqueName('together');
    const dlq = await topics.create(`${destination}.billing.dlq`, 2);
    groups.push(`${dlq}.redrive`);
    const target = await topics.create(destination, 2);
    const count = 60;
    for (let partition = 0; partition < 2; partition++) {
      await raw.send(
        Array.from({ length: count / 2 }, (_, i) => parkedOrder(destination, 'billing', partition * 100 + i)),
        partition,
      );
    }
    const [a, b] = [kafkaAdmin(), kafkaAdmin()];
    const [planA, planB] = await Promise.all([a.plan({ source: dlq }), b.plan({ source: dlq })]);
    const [approvedA, approvedB] = await Promise.all([
      fixture.approve(a, planA),
      fixture.approve(b, planB, 'bob'),
    ]);
    expectOnePublished(await Promise.allSettled([a.execute(approvedA), b.execute(approvedB)]), count);
    const published = (await admin.fetchTopicOffsets(target)).reduce((sum, p) => sum + Number(p.high), 0);
    expect(published).toBe(count);
    const [committed] = await admin.fetchOffsets({ groupId: `${dlq}.redrive`, topics: [dlq] });
    expect(committed.partitions.map((p) => p.offset).sort()).toEqual(['30', '30']);
    const log = (await fixture.history(dlq)).map((e) => (e.outcome === 'STARTED' ? 'STARTED' : e.action));
    expect(log.filter((action) => action === 'EXECUTE')).toHaveLength(1);
    expect(log.filter((action) => action === 'STARTED')).toHaveLength(1);
    expect(log.filter((action) => action === 'REFUSE')).toHaveLength(1);
  });

  // claim: C-66
  it('lets only one of two simultaneous redrives of a RabbitMQ DLQ publish', async () => {
    const destination = uniqueName('together_rmq');
    const workQueue = `${destination}.billing`;
    const dlq = `${workQueue}.dlq`;
    await declareGroupQueues(connection, workQueue);
    const count = 40;
    await sendToQueues(
      connection,
      Array.from({ length: count }, (_, i) => parkedOrder(destination, 'billing', i)),
    );
    const [a, b] = [rabbitAdmin(), rabbitAdmin()];
    const planA = await a.plan({ source: dlq });
    const planB = await b.plan({ source: dlq });
    expect(planA.messages).toHaveLength(count);
    expect(planB.messages).toHaveLength(count);
    const [approvedA, approvedB] = await Promise.all([
      fixture.approve(a, planA),
      fixture.approve(b, planB, 'bob'),
    ]);
    expectOnePublished(await Promise.allSettled([a.execute(approvedA), b.execute(approvedB)]), count);
    // Each parked message reached its group's queue once, and none is left in the DLQ.
    expect(await depthOf(connection, workQueue)).toBe(count);
    expect(await depthOf(connection, dlq)).toBe(0);
    const log = (await fixture.history(dlq)).map((e) => (e.outcome === 'STARTED' ? 'STARTED' : e.action));
    expect(log.filter((action) => action === 'EXECUTE')).toHaveLength(1);
    expect(log.filter((action) => action === 'STARTED')).toHaveLength(1);
  });

  it('records who planned, approved and ran, with the message ids and the redrive id', async () => {
    const destination = uniqueName('audited');
    const dlq = await topics.create(`${destination}.billing.dlq`, 1);
    groups.push(`${dlq}.redrive`);
    await topics.create(destination, 1);
    await raw.send([parkedOrder(destination, 'billing', 7)]);
    const service = kafkaAdmin();
    const plan = await service.plan({ source: dlq });
    const result = await service.execute(await fixture.approve(service, plan, 'bob'));
    const [planned, started, executed] = await fixture.history(dlq);
    expect(started).toMatchObject({ action: 'EXECUTE', outcome: 'STARTED', redriveId: result.redriveId });
    const ids = plan.messages.map((m) => m.messageId);
    expect(planned).toMatchObject({
      action: 'PLAN',
      actor: 'ops-carol',
      source: dlq,
      target: destination,
      messageIds: ids,
    });
    expect(executed).toMatchObject({
      action: 'EXECUTE',
      actor: 'ops-carol',
      approver: 'bob',
      redriveId: result.redriveId,
      planHash: plan.hash,
      messageIds: ids,
      outcome: 'REDRIVEN',
    });
    expect(executed.at.getTime()).toBeGreaterThanOrEqual(planned.at.getTime());
    // The log is append-only.
    await expect(fixture.schema.query('delete from messaging_redrive_audit')).rejects.toThrow(/append-only/);
  });
});

/**
 * Of two redrives of one DLQ run together, one moved all `count` messages; the other was refused while the
 * first ran or, if it came second, because the planned messages were gone.
 */
function expectOnePublished(outcomes: PromiseSettledResult<RedriveResult>[], count: number): void {
  const done = outcomes.filter((o): o is PromiseFulfilledResult<RedriveResult> => o.status === 'fulfilled');
  const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
  expect(done).toHaveLength(1);
  expect(done[0].value).toMatchObject({ redriven: count, leftInSource: 0 });
  expect(refused).toHaveLength(1);
  expect([RedriveInProgressError, RedrivePlanStaleError].some((e) => refused[0].reason instanceof e)).toBe(
    true,
  );
}
