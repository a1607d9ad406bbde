import { drainQueue } from '../support/rabbit-wire';
import { depthOf, parkedOrder, sendToQueues } from './support/parked-messages';
import { newGroupQueues, useRabbitRedriveSuite } from './support/rabbit-redrive-suite';

/**
 * Issue 28, item 7: a quorum dead-letter queue counts every read in `x-delivery-count` (each plan, each
 * console view). The plan's fingerprints cover what a message is, not that count, so a plan stays valid
 * however often the queue was looked at; reading returns the messages where they were (head first).
 */
describe('Redrive of a quorum dead-letter queue (RabbitMQ)', () => {
  const suite = useRabbitRedriveSuite('quorum_dlq');

  /** A group whose work queue and DLQ are quorum queues, with `count` parked messages. */
  async function quorumGroup(count: number) {
    const { destination, workQueue, dlq } = await newGroupQueues(suite.connection, 'quorum', true);
    const messages = Array.from({ length: count }, (_, i) => parkedOrder(destination, 'billing', i));
    await sendToQueues(suite.connection, messages);
    return { workQueue, dlq, ids: messages.map((m) => m.headers['msg.id']) };
  }

  // claim: C-71
  it('plans, is viewed again and again, is approved and redrives every planned message', async () => {
    const { redrive, fixture, connection } = suite;
    const { dlq, workQueue, ids } = await quorumGroup(3);
    const plan = await redrive.plan({ source: dlq, limit: 2 });
    expect(plan.messages.map((m) => m.messageId)).toEqual(ids.slice(0, 2));
    // The console's view of the DLQ, three times over: each read is a delivery to a quorum queue.
    for (let i = 0; i < 3; i++) {
      expect((await redrive.inspect(dlq)).map((l) => l.message.messageId)).toEqual(ids);
    }
    const result = await redrive.execute(await fixture.approve(redrive, plan));
    expect(result).toMatchObject({ redriven: 2, leftInSource: 0 });
    expect(
      (await drainQueue(connection, workQueue)).map((m) => String(m.properties.headers?.['msg.id'])),
    ).toEqual(ids.slice(0, 2));
    // What was not planned is still there, at the head.
    expect(await depthOf(connection, dlq)).toBe(1);
    expect((await redrive.plan({ source: dlq })).messages.map((m) => m.messageId)).toEqual([ids[2]]);
  });
});
