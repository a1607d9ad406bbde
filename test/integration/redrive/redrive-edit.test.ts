import * as amqp from 'amqplib';
import { newMessageId } from 'nest-reliable-messaging';
import {
  EditAlreadyClaimedError,
  issueApproval,
  MessageEditRequest,
  readApproverSigner,
  RedrivePlan,
  RedriveRefusedError,
  RedriveService,
} from 'nest-reliable-messaging/redrive';
import { eventually } from '../../harness/eventually';
import { infraEnv } from '../../harness/infra';
import { uniqueName } from '../../harness/names';
import { committedTotal } from '../support/kafka-wire';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage } from '../support/raw-messages';
import { useKafkaSuite } from '../support/suite-resources';
import { TopicReader } from '../support/topic-reader';
import { depthOf, parkedOrder, sendToQueues } from './support/parked-messages';
import { newGroupQueues, useRabbitRedriveSuite } from './support/rabbit-redrive-suite';
import { RedriveFixture } from './support/redrive-fixture';

/** Every message of `queue`, taken off it (the test's own witness). */
async function drain(connection: amqp.ChannelModel, queue: string): Promise<amqp.GetMessage[]> {
  const channel = await connection.createChannel();
  try {
    const got: amqp.GetMessage[] = [];
    for (
      let m = await channel.get(queue, { noAck: true });
      m;
      m = await channel.get(queue, { noAck: true })
    ) {
      got.push(m);
    }
    return got;
  } finally {
    await channel.close();
  }
}

const headersOf = (m: amqp.GetMessage) => (m.properties.headers ?? {}) as Record<string, string>;

/** Edit and retry (issue 40 item 1): plan an edit, approve its diff, execute; the guards, on RabbitMQ. */
describe('edit and retry on RabbitMQ', () => {
  const suite = useRabbitRedriveSuite('redrive_edit');

  /** A service that knows the OrderPlaced definition of `destination` and carries the `tenant` header. */
  function editor(destination: string, events = true): RedriveService {
    const { fixture, vhost } = suite;
    return fixture.service(
      { kind: 'rabbitmq', url: vhost.url },
      { principal: vhost.admin.name, secret: vhost.admin.password },
      { events: events ? [orderPlaced(destination)] : [], carryHeaders: ['tenant'] },
    );
  }

  /** A group with one parked order (seq 1, amount 1), and the edit request of it as `alice` plans it. */
  async function parkedGroup(prefix: string) {
    const queues = await newGroupQueues(suite.connection, prefix);
    const parked = parkedOrder(queues.destination, 'billing', 1);
    await sendToQueues(suite.connection, [parked]);
    const messageId = parked.headers['msg.id'];
    const request = (payload: unknown, extra: Partial<MessageEditRequest> = {}): MessageEditRequest => ({
      source: queues.dlq,
      position: { kind: 'queue', index: 0 },
      messageId,
      payload: JSON.stringify(payload),
      plannedBy: 'alice',
      ...extra,
    });
    const original = JSON.parse(parked.body.toString()) as Record<string, unknown>;
    return { ...queues, parked, messageId, request, original };
  }

  beforeAll(() => suite.fixture.admit('alice'));

  it('publishes the edited copy under its id with msg.edit-of, archives the original, audits the diff hash', async () => {
    const g = await parkedGroup('edit_ok');
    const service = editor(g.destination);
    const plan = await service.planEdit(
      g.request({ ...g.original, amount: 5 }, { headers: { tenant: 'acme' } }),
    );
    expect(plan.edit?.diff).toEqual([
      { path: '/amount', op: 'replace', before: '1', after: '5' },
      { path: 'header:tenant', op: 'add', after: 'acme' },
    ]);
    expect(plan.edit?.validated).toBe('schema');
    const result = await service.execute(await suite.fixture.approve(service, plan));
    expect(result).toMatchObject({ action: 'edit', redriven: 1, leftInSource: 0 });

    const [edited] = await drain(suite.connection, g.workQueue);
    expect(JSON.parse(edited.content.toString())).toEqual({ ...g.original, amount: 5 });
    expect(headersOf(edited)).toMatchObject({
      'msg.id': g.messageId,
      'msg.edit-of': expect.stringMatching(/^sha256:/) as unknown,
      'msg.redrive-id': result.redriveId,
      'msg.redrive-group': 'billing',
      tenant: 'acme',
    });
    expect(headersOf(edited)['msg.failure-category']).toBeUndefined();
    const [archived] = await drain(suite.connection, `${g.dlq}.archive`);
    expect(archived.content.equals(g.parked.body)).toBe(true);
    expect(headersOf(archived)['msg.archive-id']).toBe(result.redriveId);
    expect(await depthOf(suite.connection, g.dlq)).toBe(0);

    const log = await suite.fixture.history(g.dlq);
    const diffHash = plan.edit?.diffHash as string;
    expect(log.map((e) => `${e.action}/${e.outcome}`)).toEqual([
      'PLAN/PLANNED',
      'EXECUTE/STARTED',
      'EXECUTE/EDITED',
    ]);
    for (const entry of log) expect(entry.detail).toContain(diffHash);
    expect(log.some((e) => e.detail?.includes('acme'))).toBe(false);
  });

  it('refuses locked headers and a payload its schema refuses; without a definition, only on purpose', async () => {
    const g = await parkedGroup('edit_refused');
    const service = editor(g.destination);
    const changed = { ...g.original, amount: 5 };
    for (const header of [
      'msg.id',
      'msg.key',
      'traceparent',
      'msg.redrive-id',
      'msg.failure-code',
      'authorization',
    ]) {
      await expect(
        service.planEdit(g.request(changed, { headers: { [header]: 'x' } })),
      ).rejects.toMatchObject({
        guard: 'EDIT_REFUSED',
        reason: 'LOCKED_HEADER',
      });
    }
    await expect(service.planEdit(g.request({ ...g.original, amount: -1 }))).rejects.toMatchObject({
      reason: 'SCHEMA',
    });
    const unknowing = editor(g.destination, false);
    await expect(unknowing.planEdit(g.request(changed))).rejects.toMatchObject({ reason: 'NO_SCHEMA' });
    const unchecked = await unknowing.planEdit(g.request(changed, { withoutSchema: true }));
    expect(unchecked.edit?.validated).toBe('none');
    const refusals = (await suite.fixture.history(g.dlq)).filter((e) => e.action === 'REFUSE');
    expect(refusals.map((e) => e.outcome)).toEqual(Array(8).fill('EDIT_REFUSED'));
    expect(await depthOf(suite.connection, g.dlq)).toBe(1);
  });

  it('the editor cannot approve their own edit', async () => {
    const g = await parkedGroup('edit_self');
    const plan = await editor(g.destination).planEdit(
      g.request({ ...g.original, amount: 5 }, { plannedBy: 'jane' }),
    );
    const jane = readApproverSigner(suite.fixture.keys.jane.privateKeyFile);
    await expect(
      issueApproval(plan, jane, { ledger: suite.fixture.ledger, keyring: suite.fixture.approvers }),
    ).rejects.toMatchObject({ mismatch: 'SELF_APPROVAL' });
  });

  it('refuses a diff changed after planning, at approval and at execution', async () => {
    const g = await parkedGroup('edit_planted');
    const service = editor(g.destination);
    const plan = await service.planEdit(g.request({ ...g.original, amount: 5 }));
    const edit = plan.edit as NonNullable<RedrivePlan['edit']>;
    const swapped: RedrivePlan = {
      ...plan,
      edit: { ...edit, payload: JSON.stringify({ ...g.original, amount: 500 }) },
    };
    // (signApproval throws at once: wrapped, so that the refusal is awaited like the others)
    await expect(Promise.resolve().then(() => suite.fixture.approve(service, swapped))).rejects.toMatchObject(
      {
        mismatch: 'PLAN_EDITED',
      },
    );
    // Signed over the genuine plan, the approval does not cover a changed one.
    const approval = suite.fixture.approval(plan);
    await expect(service.approve(swapped, approval)).rejects.toBeInstanceOf(RedriveRefusedError);
    expect(await depthOf(suite.connection, g.dlq)).toBe(1);
  });

  it('one edit per dead letter: of two edits approved and run at once, one wins; the other stays refused', async () => {
    const g = await parkedGroup('edit_once');
    const service = editor(g.destination);
    const other = editor(g.destination);
    const first = await service.planEdit(g.request({ ...g.original, amount: 5 }));
    const second = await other.planEdit(g.request({ ...g.original, amount: 6 }));
    const outcomes = await Promise.allSettled([
      suite.fixture.approve(service, first).then((a) => service.execute(a)),
      suite.fixture.approve(other, second).then((a) => other.execute(a)),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const [lost] = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(lost.reason).toBeInstanceOf(RedriveRefusedError);
    // Tried again, the loser finds the dead letter claimed (and nothing moves).
    const loser = outcomes[0].status === 'rejected' ? { s: service, p: first } : { s: other, p: second };
    await expect(loser.s.execute(await suite.fixture.approve(loser.s, loser.p))).rejects.toBeInstanceOf(
      EditAlreadyClaimedError,
    );
    expect(await drain(suite.connection, g.workQueue)).toHaveLength(1);
    expect(await drain(suite.connection, `${g.dlq}.archive`)).toHaveLength(1);
  });

  it('the ledger takes an edit claim once, even for two executions at the same instant', async () => {
    const { ledger } = suite.fixture;
    const claim = `edit:${uniqueName('claim')}`;
    const use = (nonce: string) => ({
      nonce,
      planHash: 'sha256:x',
      approver: 'jane',
      redriveId: newMessageId(),
      executedBy: 'carol',
      claims: [claim],
    });
    const [a, b] = await Promise.all([
      ledger.claimApproval(use(uniqueName('n'))),
      ledger.claimApproval(use(uniqueName('n'))),
    ]);
    expect([a.claimed, b.claimed].sort()).toEqual([false, true]);
    expect([a, b].find((c) => !c.claimed)).toMatchObject({ taken: 'claim' });
  });
});

/**
 * On Kafka, with the group's own consumer and inbox: the edited copy (same message id) is handled, not
 * dropped as a duplicate; a copy of the original arriving later is not applied (ID_CONFLICT).
 */
describe('edit and retry on Kafka, through the inbox', () => {
  const suite = useKafkaSuite('redrive_edit_kafka');
  let fixture: RedriveFixture;

  beforeAll(async () => {
    fixture = await RedriveFixture.create('redrive_edit_kafka');
    fixture.admit('alice');
  });
  afterAll(() => fixture?.close());

  it('the edited copy is handled once; the original, sent again, is dead-lettered as ID_CONFLICT', async () => {
    const topic = await suite.topics.create(uniqueName('edit_k'), 1);
    const group = uniqueName('edit_k_g');
    const dlq = `${topic}.${group}.dlq`;
    suite.topics.track(dlq);
    suite.topics.track(`${dlq}.archive`);
    const probe = new ConsumerProbe();
    probe.refuse.add(1); // seq 1 fails for good (AUTHORIZATION): parked at once
    const app = await createMessagingApp({
      schema: suite.schema,
      transport: kafkaTransport(),
      entities: [HandledOrder],
      providers: [{ provide: ConsumerProbe, useValue: probe }, ordersConsumer(orderPlaced(topic), group)],
      messaging: { relay: { enabled: false } },
    });
    suite.apps.push(app);
    const id = newMessageId();
    const original = orderMessage(topic, { customer: 'erin', seq: 1 }, id);
    await suite.raw.send([original], 0);
    await eventually(async () => expect(await committedTotal(suite.kafka, group, topic)).toBe(1), 60_000);

    const service = fixture.service(
      { kind: 'kafka', brokers: infraEnv().kafkaBrokers, allowPlaintextLocal: true },
      { principal: 'redrive-admin', secret: 'test-secret' },
      { events: [orderPlaced(topic)] },
    );
    const [found] = await eventually(async () => {
      const letters = await service.search(dlq, { messageId: id });
      expect(letters).toHaveLength(1);
      return letters;
    }, 30_000);
    const payload = JSON.parse(original.body.toString()) as Record<string, unknown>;
    const plan = await service.planEdit({
      source: dlq,
      position: found.message.position,
      messageId: id,
      payload: JSON.stringify({ ...payload, seq: 2 }), // seq 2 is not refused
      plannedBy: 'alice',
    });
    const result = await service.execute(await fixture.approve(service, plan));
    expect(result).toMatchObject({ action: 'edit', redriven: 1 });

    const handled = () =>
      suite.schema.query<{ messageId: string; seq: number }>(
        'select message_id as "messageId", seq from handled_orders where consumer_group = $1 order by id',
        [group],
      );
    await eventually(async () => expect(await handled()).toEqual([{ messageId: id, seq: 2 }]), 60_000);
    const archive = await new TopicReader(`${dlq}.archive`, suite.kafka).start();
    const [archived] = await archive.waitFor(1);
    await archive.stop();
    expect(archived.value).toBe(original.body.toString());

    // The original comes back (a duplicate parked twice and redriven, say): the inbox does not apply it.
    probe.refuse.delete(1);
    await suite.raw.send([{ ...original, headers: { ...original.headers, 'msg.redrive-group': group } }], 0);
    const reader = await new TopicReader(dlq, suite.kafka).start();
    await eventually(async () => {
      const codes = (await reader.settle()).map((r) => r.headers['msg.failure-code']);
      expect(codes).toContain('ID_CONFLICT');
    }, 60_000);
    await reader.stop();
    expect(await handled()).toEqual([{ messageId: id, seq: 2 }]);
  });
});
