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
import { createMessagingApp, kafkaTransport, nextRelayRound } from '../support/messaging-app';
import { OrdersService, ordersWriter } from '../support/orders.fixture';
import { readOutboxRows, waitUntil } from '../support/outbox-rows';
import { TopicReader } from '../support/topic-reader';

/** Shutdown: stop claiming, finish the publish in flight and mark it, release every lease still held. */
describe('Outbox relay shutdown (PostgreSQL + Kafka)', () => {
  const topic = uniqueName('orders_shutdown');
  const topics = new KafkaTopics();
  let schema: TestSchema;
  let reader: TopicReader;
  const apps: TestingModule[] = [];

  const newApp = async (relay: object, beforeInit?: (app: TestingModule) => void) => {
    const app = await createMessagingApp({
      schema: schema.name,
      transport: kafkaTransport(),
      ...ordersWriter(topic),
      messaging: { relay },
      beforeInit,
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

  // claim: C-34
  it('finishes the batch in flight, marks it sent and claims nothing more', async () => {
    const app = await newApp({ pollIntervalMs: 60_000 });
    const transport = app.get<MessageTransport>(MESSAGING_TRANSPORT);
    const relay = app.get(OutboxRelay);
    const publish = transport.publish.bind(transport);
    let inFlight!: () => void;
    const publishing = new Promise<void>((resolve) => (inFlight = resolve));
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    // A slow broker: the batch is still in flight when the application is asked to stop; it answers only
    // once shutdown has begun.
    jest.spyOn(transport, 'publish').mockImplementation(async (messages) => {
      inFlight();
      await answered;
      return publish(messages);
    });
    const shutdown = relay.beforeApplicationShutdown.bind(relay);
    jest.spyOn(relay, 'beforeApplicationShutdown').mockImplementation(() => {
      setImmediate(answer);
      return shutdown();
    });
    const claim = jest.spyOn(app.get(OutboxStore), 'claim');

    await placeBatch(app, 'in-flight', 10);
    await publishing;
    // Committed while the batch is in flight: it wakes the relay, which must not claim it any more.
    await placeBatch(app, 'after-stop', 5);
    const claimsBeforeClose = claim.mock.calls.length;
    await close(app);

    // close() came back only after the batch in flight was confirmed and marked.
    expect(claim.mock.calls.length).toBe(claimsBeforeClose);
    const inFlightRows = await rowsOf('in-flight');
    expect(inFlightRows.map((r) => [r.sentAt !== null, r.lockedBy])).toEqual(
      inFlightRows.map(() => [true, null]),
    );
    const later = await rowsOf('after-stop');
    expect(later.map((r) => [r.sentAt, r.lockedBy, r.attempts])).toEqual(later.map(() => [null, null, 0]));
    await reader.waitFor(10);

    // The rows left behind are free for the next instance at once (no lease to wait for).
    const next = await newApp({ pollIntervalMs: 60_000 });
    await waitUntil('the next instance sends what was left', async () =>
      (await rowsOf('after-stop')).every((r) => r.sentAt !== null),
    );
    await close(next);
    await reader.waitFor(15);
    const records = await reader.settle();
    expect(new Set(records.map((r) => r.headers['msg.id'])).size).toBe(15);
    expect(records).toHaveLength(15);
  });

  it('releases the leases of rows it claimed but did not publish', async () => {
    let firstRound!: Promise<unknown>;
    const app = await newApp({ pollIntervalMs: 60_000, leaseMs: 60_000 }, (starting) => {
      firstRound = nextRelayRound(starting);
    });
    const relay = app.get(OutboxRelay);
    // Written by an instance without a relay after this one's first round: nothing wakes this relay.
    await firstRound;
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
