import * as amqp from 'amqplib';
import { RedriveLimits } from 'nest-reliable-messaging/redrive';
import { drainQueue } from '../support/rabbit-wire';
import { depthOf, parkedOrder, sendToQueues } from './support/parked-messages';
import { newGroupQueues, useRabbitRedriveSuite } from './support/rabbit-redrive-suite';

const MIB = 1024 * 1024;
const idsOf = (messages: amqp.GetMessage[]) => messages.map((m) => String(m.properties.headers?.['msg.id']));

/**
 * Issue 45, item 7 (review finding 6) on RabbitMQ: any service can publish into a DLQ, so large messages at
 * its head must not decide how much a page or a plan holds. A read stops at the byte budget (16 MiB by
 * default), says how many it did not read, returns every message it got to its place, and a plan covers
 * only what it read.
 */
describe('Reads of dead letters within a byte budget (RabbitMQ)', () => {
  const suite = useRabbitRedriveSuite('budget_rmq');

  it('reads the large head only up to 16 MiB, reports the rest, and plans only what it read', async () => {
    const { redrive, fixture, connection } = suite;
    const { destination, workQueue, dlq } = await newGroupQueues(connection, 'budget');
    const large = Array.from({ length: 5 }, (_, seq) => ({
      ...parkedOrder(destination, 'billing', seq),
      body: Buffer.alloc(5 * MIB, 'x'),
    }));
    const small = Array.from({ length: 5 }, (_, seq) => parkedOrder(destination, 'billing', 100 + seq));
    await sendToQueues(connection, [...large, ...small]);
    const ids = [...large, ...small].map((m) => m.headers['msg.id']);

    // 3 × 5 MiB fit the default budget; the fourth would cross it and is not kept.
    const read = await redrive.browse(dlq);
    expect(read.letters.map((l) => l.message.messageId)).toEqual(ids.slice(0, 3));
    expect(read.depth).toBe(10);
    expect(read.cutOff).toEqual({ reason: 'byte-budget', budgetBytes: 16 * MIB, notRead: 7 });
    const head = await redrive.inspectHead(dlq);
    expect(head.letters).toHaveLength(3);
    expect(head.cutOff?.notRead).toBe(7);

    // Unacked and returned: every message is still there, in its order.
    expect(await depthOf(connection, dlq)).toBe(10);
    expect((await redrive.browse(dlq)).letters.map((l) => l.message.messageId)).toEqual(ids.slice(0, 3));

    // A plan from the head covers the three it read and says so; an id beyond the budget is not found.
    const plan = await redrive.plan({ source: dlq });
    expect(plan.messages.map((m) => m.messageId)).toEqual(ids.slice(0, 3));
    expect(plan.cutOff).toEqual({ reason: 'byte-budget', budgetBytes: 16 * MIB, notRead: 7 });
    const picked = await redrive.plan({
      source: dlq,
      selection: { by: 'ids', messageIds: [ids[1], ids[8]] },
    });
    expect(picked.messages.map((m) => m.messageId)).toEqual([ids[1]]);
    expect(picked.notFound).toEqual([ids[8]]);
    expect(picked.cutOff?.notRead).toBe(7);

    // The plan runs as any other: the three move, the rest stays in order and now fits the budget.
    const result = await redrive.execute(await fixture.approve(redrive, plan));
    expect(result).toMatchObject({ redriven: 3 });
    expect(idsOf(await drainQueue(connection, workQueue))).toEqual(ids.slice(0, 3));
    const rest = await redrive.browse(dlq);
    expect(rest.letters.map((l) => l.message.messageId)).toEqual(ids.slice(3));
    expect(rest.cutOff).toBeUndefined();
    expect(RedriveLimits.READ_BUDGET_BYTES).toBe(16 * MIB);
  });

  it('holds a configured budget: one message when the first alone is larger', async () => {
    const { fixture, vhost, connection } = suite;
    const { destination, dlq } = await newGroupQueues(connection, 'budget_small');
    const messages = Array.from({ length: 4 }, (_, seq) => ({
      ...parkedOrder(destination, 'billing', seq),
      body: Buffer.alloc(2 * MIB, 'y'),
    }));
    await sendToQueues(connection, messages);
    const tight = fixture.service(
      { kind: 'rabbitmq', url: vhost.url },
      { principal: vhost.admin.name, secret: vhost.admin.password },
      { readBudgetBytes: MIB },
    );
    const read = await tight.browse(dlq);
    expect(read.letters.map((l) => l.message.messageId)).toEqual([messages[0].headers['msg.id']]);
    expect(read.cutOff).toEqual({ reason: 'byte-budget', budgetBytes: MIB, notRead: 3 });
    expect(await depthOf(connection, dlq)).toBe(4);
  });
});
