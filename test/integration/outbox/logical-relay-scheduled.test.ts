import { TestingModule } from '@nestjs/testing';
import * as amqp from 'amqplib';
import { OutboxService, TransactionHost } from 'nest-reliable-messaging';
import { uniqueName } from '../../harness/names';
import { PostgresCluster } from '../../harness/postgres-cluster';
import { RabbitFixture } from '../../harness/rabbitmq';
import { createLogicalSchema, LogicalSchema, startLogicalCluster } from '../support/logical-cluster';
import { createMessagingApp, rabbitTransport } from '../support/messaging-app';
import { orderPlaced } from '../support/orders.fixture';
import { waitUntil } from '../support/outbox-rows';
import { bindQueue, QueueReader } from '../support/queue-reader';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Issue 42 item 1 with `relay.mode: 'logical'`: a scheduled message is not written to the log (which the slot's
 * reader would publish at once) but waits in the table of scheduled messages; when it is due the polling relay,
 * which runs beside the logical one, moves it into the outbox and publishes it. Never early; cancel works.
 */
describe('Scheduled messages with the logical relay (PostgreSQL log → RabbitMQ)', () => {
  const rabbit = new RabbitFixture();
  const destination = uniqueName('reminders_logical');
  let cluster: PostgresCluster;
  let db: LogicalSchema;
  let app: TestingModule;
  let connection: amqp.ChannelModel;
  let reader: QueueReader;

  beforeAll(async () => {
    cluster = await startLogicalCluster('logical-sched');
    db = await createLogicalSchema(cluster, 'logical_sched');
    connection = await rabbit.connect();
    const queue = uniqueName('reminders_logical_q');
    rabbit.track({ exchanges: [destination], queues: [queue] });
    await bindQueue(connection, destination, queue);
    reader = await new QueueReader(connection, queue).start();
    app = await createMessagingApp({
      schema: db,
      transport: rabbitTransport(),
      messaging: { relay: { mode: 'logical', pollIntervalMs: 3_600_000 } },
    });
  }, 120_000);

  afterAll(async () => {
    await reader?.stop();
    await app?.close();
    await rabbit.cleanup();
    await db?.drop();
    await cluster?.destroy();
  });

  const inTransaction = <T>(work: (outbox: OutboxService) => Promise<T>) =>
    app.get(TransactionHost).run(() => work(app.get(OutboxService)));
  const orderIds = () =>
    reader.messages.map((m) => (JSON.parse(m.content.toString()) as { orderId: number }).orderId);

  it('publishes a scheduled message when due, not from the log at its commit; its key is not held back; cancel keeps one back', async () => {
    const event = orderPlaced(destination);
    const before = Date.now();
    const cancelled = await inTransaction(async (outbox) => {
      await outbox.add(event, { orderId: 1, customer: 'k', amount: 1 }, { delayMs: 1_500 });
      await outbox.add(event, { orderId: 2, customer: 'k', amount: 1 }); // through the log, at once
      return outbox.add(event, { orderId: 3, customer: 'k', amount: 1 }, { delayMs: 1_000 });
    });
    expect(await inTransaction((outbox) => outbox.cancel(cancelled))).toEqual({ cancelled: true });
    await waitUntil('the unscheduled message arrived', async () => orderIds().includes(2), 10_000, 20);
    await sleep(Math.max(0, before + 1_000 - Date.now()));
    expect(orderIds()).toEqual([2]);
    await waitUntil('the scheduled message arrived', async () => orderIds().includes(1), 10_000, 20);
    expect(Date.now() - before).toBeGreaterThanOrEqual(1_500);
    await sleep(300);
    expect((await reader.settle()).length).toBe(2);
    expect(orderIds()).toEqual([2, 1]);
  });
});
