import * as amqp from 'amqplib';
import { RedriveService } from 'nest-reliable-messaging/redrive';
import { uniqueName } from '../../harness/names';
import { drainQueue } from '../support/rabbit-wire';
import { depthOf, parkedOrder, sendToQueues } from './support/parked-messages';
import { RabbitVhost } from './support/rabbit-vhost';
import { RedriveFixture } from './support/redrive-fixture';

/**
 * Issue 28, item 7: a quorum dead-letter queue counts every read in `x-delivery-count` (each plan, each
 * console view). The plan's fingerprints cover what a message is, not that count, so a plan stays valid
 * however often the queue was looked at; reading returns the messages where they were (head first).
 */
describe('Redrive of a quorum dead-letter queue (RabbitMQ)', () => {
  let vhost: RabbitVhost;
  let connection: amqp.ChannelModel;
  let fixture: RedriveFixture;
  let redrive: RedriveService;

  /** A group whose work queue and DLQ are quorum queues, with `count` parked messages. */
  async function quorumGroup(count: number) {
    const destination = uniqueName('quorum');
    const workQueue = `${destination}.billing`;
    const channel = await connection.createChannel();
    for (const queue of [workQueue, `${workQueue}.dlq`]) {
      await channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    }
    await channel.close();
    const messages = Array.from({ length: count }, (_, i) => parkedOrder(destination, 'billing', i));
    await sendToQueues(connection, messages);
    return { workQueue, dlq: `${workQueue}.dlq`, ids: messages.map((m) => m.headers['msg.id']) };
  }

  beforeAll(async () => {
    fixture = await RedriveFixture.create('quorum_dlq');
    vhost = await RabbitVhost.create('quorum_dlq');
    connection = await amqp.connect(vhost.urlAs(vhost.admin));
    redrive = fixture.service(
      { kind: 'rabbitmq', url: vhost.url },
      { principal: vhost.admin.name, secret: vhost.admin.password },
    );
  });

  afterAll(async () => {
    await fixture?.close();
    await connection?.close().catch(() => undefined);
    await vhost?.delete();
  });

  it('plans, is viewed again and again, is approved and redrives every planned message', async () => {
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
