import { TestingModule } from '@nestjs/testing';
import {
  MESSAGING_TRANSPORT,
  MessageTransport,
  OutboxRelay,
  OutboxStore,
} from 'nest-reliable-messaging/testing';
import { TransactionHost } from 'nest-reliable-messaging';
import { KafkaTopics } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { OrdersService, ordersWriter } from '../support/orders.fixture';
import { readOutboxRows, sleep, waitUntil } from '../support/outbox-rows';
import { TopicReader } from '../support/topic-reader';

/** Shutdown: stop claiming, finish the publish in flight and mark it, release every lease still held. */
describe('Outbox relay shutdown (PostgreSQL + Kafka)', () => {
  const topic = uniqueName('orders_shutdown');
  const topics = new KafkaTopics();
  let schema: TestSchema;
  let reader: TopicReader;
  const apps: TestingModule[] = [];

  const newApp = async (relay: object) => {
    const app = await createMessagingApp({
      schema: schema.name,
      transport: kafkaTransport(),
      ...ordersWriter(topic),
      messaging: { relay },
    });
    apps.push(app);
    return app;
  };
  const close = async (app: TestingModule) => {
    apps.splice(apps.indexOf(app), 1);
    await app.close();
  };
  /** Places `count` orders of `customer` in one transaction: one commit, one wake-up, one claim. */
  const placeBatch = (app: TestingModule, customer: string, count: number) =>
    app.get(TransactionHost).run(async () => {
      for (let seq = 0; seq < count; seq++) await app.get(OrdersService).place(customer, seq, seq);
    });
  const rowsOf = async (key: string) => (await readOutboxRows(schema)).filter((r) => r.key === key);

  beforeAll(async () => {
    schema = await createTestSchema('outbox_shutdown');
    await topics.create(topic);
    reader = await new TopicReader(topic).start();
  });

  afterAll(async () => {
    await reader.stop();
    for (const app of apps.splice(0)) await app.close();
    await topics.cleanup();
    await schema.drop();
  });

  it('finishes the batch in flight, marks it sent and claims nothing more', async () => {
    const app = await newApp({ pollIntervalMs: 60_000 });
    const transport = app.get<MessageTransport>(MESSAGING_TRANSPORT);
    const publish = transport.publish.bind(transport);
    let inFlight!: () => void;
    const publishing = new Promise<void>((resolve) => (inFlight = resolve));
    // A slow broker: the batch is still in flight when the application is asked to stop.
    jest.spyOn(transport, 'publish').mockImplementation(async (messages) => {
      inFlight();
      await sleep(1_500);
      return publish(messages);
    });
    const claim = jest.spyOn(app.get(OutboxStore), 'claim');

    await placeBatch(app, 'in-flight', 10);
    await publishing;
    // Committed while the batch is in flight: it wakes the relay, which must not claim it any more.
    await placeBatch(app, 'after-stop', 5);
    const claimsBeforeClose = claim.mock.calls.length;
    const closing = Date.now();
    await close(app);
    const closeMs = Date.now() - closing;

    expect(claim.mock.calls.length).toBe(claimsBeforeClose);
    const inFlightRows = await rowsOf('in-flight');
    expect(inFlightRows.map((r) => [r.sentAt !== null, r.lockedBy])).toEqual(
      inFlightRows.map(() => [true, null]),
    );
    const later = await rowsOf('after-stop');
    expect(later.map((r) => [r.sentAt, r.lockedBy, r.attempts])).toEqual(later.map(() => [null, null, 0]));
    await reader.waitFor(10);
    console.log(`[outbox-shutdown] close() waited ${closeMs} ms for the batch in flight`);
    expect(closeMs).toBeGreaterThan(500);

    // The rows left behind are free for the next instance at once (no lease to wait for).
    const next = await newApp({ pollIntervalMs: 60_000 });
    await waitUntil('the next instance sends what was left', async () =>
      (await rowsOf('after-stop')).every((r) => r.sentAt !== null),
    );
    await close(next);
    await reader.waitFor(15);
    const records = await reader.settle(1_000);
    expect(new Set(records.map((r) => r.headers['msg.id'])).size).toBe(15);
    expect(records).toHaveLength(15);
  });

  it('releases the leases of rows it claimed but did not publish', async () => {
    const app = await newApp({ pollIntervalMs: 60_000, leaseMs: 60_000 });
    const relay = app.get(OutboxRelay);
    // Written by an instance without a relay after this one's first round: nothing wakes this relay.
    await sleep(300);
    const writer = await newApp({ enabled: false });
    await placeBatch(writer, 'claimed', 4);
    // Claimed in this instance's name, as a round that was cut short would leave them.
    const claimed = await app.get(OutboxStore).claim(100, relay.instanceId, 60_000);
    expect(claimed.map((r) => r.key)).toEqual(['claimed', 'claimed', 'claimed', 'claimed']);
    expect((await rowsOf('claimed')).every((r) => r.lockedBy === relay.instanceId)).toBe(true);

    await close(app);
    const released = await rowsOf('claimed');
    expect(released.map((r) => [r.lockedBy, r.lockedUntil, r.sentAt])).toEqual(
      released.map(() => [null, null, null]),
    );

    // Without the release, these would wait a minute for the lease to expire.
    const next = await newApp({ pollIntervalMs: 60_000, leaseMs: 60_000 });
    await waitUntil(
      'another instance sends them at once',
      async () => (await rowsOf('claimed')).every((r) => r.sentAt !== null),
      10_000,
    );
    await close(next);
    await close(writer);
  });
});
