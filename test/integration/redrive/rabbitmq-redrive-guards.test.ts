import * as amqp from 'amqplib';
import { FailureCategory, MessagingMetrics } from 'nest-reliable-messaging';
import { deadLetterCopy, failureHeaders } from 'nest-reliable-messaging/testing';
import {
  ApprovalExpiredError,
  ApprovalRequiredError,
  ApprovedRedrivePlan,
  RedriveBatchTooLargeError,
  RedriveHeaders,
  RedrivePlan,
  RedrivePlanStaleError,
  RedriveService,
  SameSourceAndTargetError,
} from 'nest-reliable-messaging/redrive';
import { uniqueName } from '../../harness/names';
import { drainQueue } from '../support/rabbit-wire';
import {
  declareGroupQueues,
  depthOf,
  LOCAL_DEAD_LETTER_POLICY,
  parkedOrder,
  sendToQueues,
} from './support/parked-messages';
import { RabbitVhost } from './support/rabbit-vhost';
import { RedriveFixture } from './support/redrive-fixture';

/** Every redrive guard on a real RabbitMQ, in a vhost of the suite's own, as its admin user. */
describe('Redrive guards on RabbitMQ', () => {
  let vhost: RabbitVhost;
  let connection: amqp.ChannelModel;
  const metrics = new MessagingMetrics();
  let clock = () => new Date();
  let fixture: RedriveFixture;

  function redrive(now: () => Date = () => clock()): RedriveService {
    return fixture.service(
      { kind: 'rabbitmq', url: vhost.url },
      { principal: vhost.admin.name, secret: vhost.admin.password },
      { metrics, clock: { now: () => now().getTime() } },
    );
  }

  /** A group's queues with `count` parked messages in its DLQ. */
  async function parked(count: number) {
    const destination = uniqueName('guards');
    const group = 'billing';
    const workQueue = `${destination}.${group}`;
    await declareGroupQueues(connection, workQueue);
    const messages = Array.from({ length: count }, (_, i) => parkedOrder(destination, group, i));
    await sendToQueues(connection, messages);
    return { workQueue, dlq: `${workQueue}.dlq`, messages };
  }

  const approve = (service: RedriveService, plan: RedrivePlan): Promise<ApprovedRedrivePlan> =>
    fixture.approve(service, plan);
  const counted = async () => (await metrics.redriven.get()).values.reduce((sum, v) => sum + v.value, 0);

  beforeAll(async () => {
    fixture = await RedriveFixture.create('redrive_guards');
    vhost = await RabbitVhost.create('redrive_guards');
    connection = await amqp.connect(vhost.urlAs(vhost.admin));
  });

  afterAll(async () => {
    await fixture?.close();
    await connection?.close().catch(() => undefined);
    await vhost?.delete();
  });

  it('a dry run changes nothing: DLQ depth and order, target depth', async () => {
    const { dlq, workQueue, messages } = await parked(3);
    const first = await redrive().plan({ source: dlq });
    const second = await redrive().plan({ source: dlq });
    expect(first.messages.map((m) => m.messageId)).toEqual(messages.map((m) => m.headers['msg.id']));
    expect(first.messages.map((m) => m.position)).toEqual(
      [0, 1, 2].map((index) => ({ kind: 'queue', index })),
    );
    expect(second.messages).toEqual(first.messages);
    expect(first).toMatchObject({ source: dlq, target: workQueue, depth: 3 });
    expect(await depthOf(connection, dlq)).toBe(3);
    expect(await depthOf(connection, workQueue)).toBe(0);
  });

  it('refuses to execute without an approval, a forged one or an expired one', async () => {
    const { dlq } = await parked(2);
    const service = redrive();
    const plan = await service.plan({ source: dlq });
    await expect(service.approve(plan, undefined)).rejects.toThrow(ApprovalRequiredError);
    await expect(service.execute(plan as unknown as ApprovedRedrivePlan)).rejects.toThrow(
      ApprovalRequiredError,
    );

    const anHourAgo = new Date(Date.now() - 3_600_000);
    const stale = fixture.approval(plan, 'jane', { at: anHourAgo, ttlMs: 15 * 60_000 });
    await expect(service.approve(plan, stale)).rejects.toThrow(ApprovalExpiredError);

    const approved = await approve(service, plan);
    clock = () => new Date(Date.now() + 16 * 60_000); // the approval expires before it is run
    try {
      await expect(service.execute(approved)).rejects.toThrow(ApprovalExpiredError);
    } finally {
      clock = () => new Date();
    }
    expect(await depthOf(connection, dlq)).toBe(2);
  });

  it('reads one message by its position from the head, with the start of its payload, settling nothing', async () => {
    const { dlq, messages } = await parked(3);
    const service = redrive();
    const third = await service.inspectMessage(
      dlq,
      { kind: 'queue', index: 2 },
      messages[2].headers['msg.id'],
    );
    expect(third?.payload).toEqual({
      text: messages[2].body.toString('utf8'),
      bytes: messages[2].body.length,
      truncated: false,
    });
    const moved = await service.inspectMessage(
      dlq,
      { kind: 'queue', index: 1 },
      messages[2].headers['msg.id'],
    );
    expect(moved).toBeUndefined();
    expect(await depthOf(connection, dlq)).toBe(3);
    expect((await service.plan({ source: dlq })).messages.map((m) => m.messageId)).toEqual(
      messages.map((m) => m.headers['msg.id']),
    );
  });

  it('refuses a target equal to the source', async () => {
    const { dlq } = await parked(1);
    await expect(redrive().plan({ source: dlq, target: dlq })).rejects.toThrow(SameSourceAndTargetError);
    expect(await depthOf(connection, dlq)).toBe(1);
  });

  it('refuses 101 messages: a limit of 101, a plan of 101; a DLQ of 101 plans 100', async () => {
    const { dlq } = await parked(101);
    const service = redrive();
    await expect(service.plan({ source: dlq, limit: 101 })).rejects.toThrow(RedriveBatchTooLargeError);
    const plan = await service.plan({ source: dlq });
    expect(plan).toMatchObject({ depth: 101 });
    expect(plan.messages).toHaveLength(100);
    const oversized = {
      ...plan,
      messages: [...plan.messages, { ...plan.messages[0], position: { kind: 'queue' as const, index: 100 } }],
    };
    await expect(service.approve(oversized, fixture.approval(plan))).rejects.toThrow(
      RedriveBatchTooLargeError,
    );
    expect(await depthOf(connection, dlq)).toBe(101);
  });

  it('moves the planned messages: new redrive id, no failure headers, confirmed, then settled, counted', async () => {
    const { dlq, workQueue, messages } = await parked(3);
    const before = await counted();
    const service = redrive();
    const plan = await service.plan({ source: dlq });
    const result = await service.execute(await approve(service, plan));
    expect(result.messages.map((m) => m.status)).toEqual(['REDRIVEN', 'REDRIVEN', 'REDRIVEN']);
    expect(await depthOf(connection, dlq)).toBe(0);
    expect(await counted()).toBe(before + 3);

    const back = await drainQueue(connection, workQueue);
    expect(back.map((m) => m.content.toString())).toEqual(messages.map((m) => m.body.toString()));
    for (const [i, message] of back.entries()) {
      const headers = message.properties.headers ?? {};
      expect(headers['msg.id']).toBe(messages[i].headers['msg.id']);
      expect(headers[RedriveHeaders.REDRIVE_ID]).toBe(result.redriveId);
      expect(headers[RedriveHeaders.REDRIVE_ID]).not.toBe(headers['msg.id']);
      // The real key is back (defect 7): the work queue's keyed lanes and the handler see it, not a hash.
      expect(headers['msg.key']).toBe(`c${i % 3}`);
      expect(headers).not.toHaveProperty(['msg.sealed-key']);
      expect(Object.keys(headers).filter((h) => /failure|retry|origin/.test(h))).toEqual([]);
    }
  });

  // claim: C-73
  it('leaves a message whose republish is not confirmed in the DLQ', async () => {
    const { dlq, workQueue } = await parked(2);
    const channel = await connection.createChannel();
    await channel.deleteQueue(workQueue); // the work queue now refuses every message
    await channel.assertQueue(workQueue, {
      arguments: { 'x-max-length': 0, 'x-overflow': 'reject-publish' },
    });
    await channel.close();
    const before = await counted();
    const service = redrive();
    const plan = await service.plan({ source: dlq });
    const result = await service.execute(await approve(service, plan));
    expect(result).toMatchObject({ redriven: 0, leftInSource: 2 });
    expect(result.messages.map((m) => m.status)).toEqual(['NOT_CONFIRMED', 'NOT_CONFIRMED']);
    expect(await depthOf(connection, dlq)).toBe(2);
    expect((await service.plan({ source: dlq })).messages).toEqual(plan.messages);
    expect(await counted()).toBe(before);
  });

  it('refuses a plan the DLQ no longer matches, and moves nothing', async () => {
    const { dlq } = await parked(2);
    const service = redrive();
    const plan = await service.plan({ source: dlq });
    const channel = await connection.createChannel();
    const taken = await channel.get(dlq, { noAck: true }); // someone else took the head meanwhile
    await channel.close();
    expect(taken).not.toBe(false);
    await expect(service.execute(await approve(service, plan))).rejects.toThrow(RedrivePlanStaleError);
    expect(await depthOf(connection, dlq)).toBe(1);
  });

  it('shows a redrive loop: a message parked again carries the earlier redrive id', async () => {
    const { dlq, workQueue } = await parked(1);
    const service = redrive();
    const plan = await service.plan({ source: dlq });
    const first = await service.execute(await approve(service, plan));
    // The consumer fails again and parks it once more, with the library's own dead-letter copy.
    const [again] = await drainQueue(connection, workQueue);
    const headers = Object.fromEntries(
      Object.entries(again.properties.headers ?? {}).map(([name, value]) => [name, String(value)]),
    );
    const wire = { destination: workQueue, key: headers['msg.key'] ?? null, headers, body: again.content };
    const failure = failureHeaders(
      {
        category: FailureCategory.TRANSIENT,
        code: 'AGAIN',
        originDestination: workQueue.slice(0, -'.billing'.length),
        attempt: 1,
        now: new Date(),
      },
      headers,
    );
    await sendToQueues(connection, [deadLetterCopy(wire, dlq, failure, LOCAL_DEAD_LETTER_POLICY)]);

    const replan = await service.plan({ source: dlq });
    expect(replan.messages[0]).toMatchObject({ redriveCount: 1, previousRedriveIds: [first.redriveId] });
    const second = await service.execute(await approve(service, replan));
    expect(second.redriveId).not.toBe(first.redriveId);
    const [twice] = await drainQueue(connection, workQueue);
    expect(twice.properties.headers).toMatchObject({
      [RedriveHeaders.REDRIVE_ID]: second.redriveId,
      [RedriveHeaders.REDRIVE_HISTORY]: first.redriveId,
      [RedriveHeaders.REDRIVE_COUNT]: '2',
    });
  });
});
