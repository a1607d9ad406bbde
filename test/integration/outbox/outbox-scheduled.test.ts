import { TestingModule } from '@nestjs/testing';
import * as amqp from 'amqplib';
import {
  InvalidScheduleError,
  MessagingMigrations,
  MysqlMessagingMigrations,
  OutboxService,
  TransactionHost,
} from 'nest-reliable-messaging';
import { DataSource } from 'typeorm';
import { KafkaTopics } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { RabbitFixture } from '../../harness/rabbitmq';
import { createTestDatabase, EACH_DATABASE, TestDatabase, TestDialect } from '../../harness/test-database';
import {
  createMessagingApp,
  kafkaTransport,
  rabbitTransport,
  testConnectionOptions,
} from '../support/messaging-app';
import { orderPlaced } from '../support/orders.fixture';
import { readOutboxRows, waitUntil } from '../support/outbox-rows';
import { bindQueue, QueueReader } from '../support/queue-reader';
import { TopicReader } from '../support/topic-reader';

/** What a witness read: the payload's order id and key (customer), and when it arrived (this process's clock). */
interface Arrival {
  readonly orderId: number;
  readonly customer: string;
  readonly at: number;
}

/** An independent reader of the destination, on either broker. */
interface Witness {
  readonly arrivals: Arrival[];
  /** Everything published before the call has arrived. */
  settle(): Promise<Arrival[]>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Broker = 'rabbitmq' | 'kafka';
const CASES: ReadonlyArray<readonly [string, TestDialect, Broker]> = EACH_DATABASE.flatMap(
  ([label, dialect]) =>
    (['rabbitmq', 'kafka'] as const).map((broker) => [`${label} + ${broker}`, dialect, broker] as const),
);

/**
 * Issue 42 item 1: `add(…, { delayMs | deliverAt })` waits in the table of scheduled messages until due by the
 * database's clock; the relay wakes at the due time (the safety poll here is an hour) and publishes it;
 * `cancel()` keeps it from ever being published; it does not hold back its key's other messages while it
 * waits, and scheduled messages of one key go out in due order, then insertion order.
 */
describe.each(CASES)('Scheduled messages (%s)', (_, dialect, broker) => {
  const rabbit = new RabbitFixture();
  const topics = new KafkaTopics();
  const destination = uniqueName('reminders');
  let db: TestDatabase;
  let connection: amqp.ChannelModel | undefined;
  let witness: Witness;
  let app: TestingModule;

  beforeAll(async () => {
    db = await createTestDatabase(dialect, 'outbox_scheduled');
    if (broker === 'rabbitmq') {
      connection = await rabbit.connect();
      const queue = uniqueName('reminders_q');
      rabbit.track({ exchanges: [destination], queues: [queue] });
      await bindQueue(connection, destination, queue);
      const reader = await new QueueReader(connection, queue).start();
      const arrivals: Arrival[] = [];
      const seen = new Set<amqp.ConsumeMessage>();
      const collect = (messages: amqp.ConsumeMessage[]) => {
        for (const m of messages) {
          if (seen.has(m)) continue;
          seen.add(m);
          arrivals.push({ ...(JSON.parse(m.content.toString()) as Arrival), at: Date.now() });
        }
        return arrivals;
      };
      const timer = setInterval(() => collect(reader.messages), 10);
      witness = {
        arrivals,
        settle: async () => collect(await reader.settle()),
        stop: async () => {
          clearInterval(timer);
          await reader.stop();
        },
      };
    } else {
      await topics.create(destination, 1);
      const reader = await new TopicReader(destination).start();
      const arrivals: Arrival[] = [];
      const collect = () => {
        while (arrivals.length < reader.records.length) {
          const record = reader.records[arrivals.length];
          arrivals.push({ ...(JSON.parse(record.value) as Arrival), at: Date.now() });
        }
        return arrivals;
      };
      const timer = setInterval(collect, 10);
      witness = {
        arrivals,
        settle: async () => {
          await reader.settle();
          return collect();
        },
        stop: async () => {
          clearInterval(timer);
          await reader.stop();
        },
      };
    }
    app = await createMessagingApp({
      schema: db,
      transport: broker === 'rabbitmq' ? rabbitTransport() : kafkaTransport(),
      // A safety poll of an hour: what is delivered on time was woken by the relay's scheduled wake-up.
      messaging: { relay: { pollIntervalMs: 3_600_000 } },
    });
  });

  afterAll(async () => {
    await witness?.stop();
    await app?.close();
    await rabbit.cleanup();
    await topics.cleanup();
    await db?.drop();
  });

  const inTransaction = <T>(work: (outbox: OutboxService) => Promise<T>) =>
    app.get(TransactionHost).run(() => work(app.get(OutboxService)));
  const event = () => orderPlaced(destination);
  const arrived = (orderId: number) => witness.arrivals.find((a) => a.orderId === orderId);

  it('does not deliver a message with delayMs 1500 before its time, and delivers it then (woken, not polled)', async () => {
    const before = Date.now();
    await inTransaction((outbox) =>
      outbox.add(event(), { orderId: 1, customer: 'c1', amount: 1 }, { delayMs: 1_500 }),
    );
    await sleep(1_000);
    await witness.settle();
    expect(arrived(1)).toBeUndefined();
    const delivery = await waitUntil('the scheduled message arrived', async () => arrived(1), 10_000, 20);
    expect(delivery.at - before).toBeGreaterThanOrEqual(1_500);
    expect(delivery.at - before).toBeLessThan(1_500 + 2_500);
  });

  it('delivers at deliverAt, and takes a deliverAt in the past as now', async () => {
    const before = Date.now();
    await inTransaction(async (outbox) => {
      await outbox.add(
        event(),
        { orderId: 2, customer: 'c2', amount: 1 },
        { deliverAt: new Date(before + 1_200) },
      );
      await outbox.add(
        event(),
        { orderId: 3, customer: 'c3', amount: 1 },
        { deliverAt: new Date(before - 60_000) },
      );
    });
    const past = await waitUntil('the message due in the past arrived', async () => arrived(3), 10_000, 20);
    expect(past.at - before).toBeLessThan(1_200);
    const due = await waitUntil('the scheduled message arrived', async () => arrived(2), 10_000, 20);
    expect(due.at - before).toBeGreaterThanOrEqual(1_200);
  });

  // claim: C-110
  it('cancel() keeps a scheduled message from ever being delivered, and says false for what it cannot cancel', async () => {
    const notFound = { cancelled: false, reason: 'not-found' };
    const id = await inTransaction((outbox) =>
      outbox.add(event(), { orderId: 10, customer: 'c10', amount: 1 }, { delayMs: 1_000 }),
    );
    expect(await inTransaction((outbox) => outbox.cancel(id))).toEqual({ cancelled: true });
    expect(await inTransaction((outbox) => outbox.cancel(id))).toEqual(notFound); // cancelled already
    expect(await inTransaction((outbox) => outbox.cancel('0193b6a0-0000-7000-8000-000000000000'))).toEqual(
      notFound,
    );
    // A cancel in a transaction that rolls back cancels nothing.
    const kept = await inTransaction((outbox) =>
      outbox.add(event(), { orderId: 11, customer: 'c11', amount: 1 }, { delayMs: 1_000 }),
    );
    await expect(
      inTransaction(async (outbox) => {
        expect(await outbox.cancel(kept)).toEqual({ cancelled: true });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    const sent = await waitUntil('the kept message arrived', async () => arrived(11), 10_000, 20);
    expect(sent).toBeDefined();
    await sleep(200);
    expect(arrived(10)).toBeUndefined();
    // Published (its row kept a day by default): nothing left to cancel, and it says so.
    expect(await inTransaction((outbox) => outbox.cancel(kept))).toEqual({
      cancelled: false,
      reason: 'sent',
    });
    expect((await readOutboxRows(db)).some((r) => r.messageId === id)).toBe(false);
  });

  it("does not hold back its key's messages while it waits; a key's scheduled messages go out in due order, then insertion order", async () => {
    const key = 'ordered';
    const at = new Date(Date.now() + 1_500);
    await inTransaction(async (outbox) => {
      await outbox.add(event(), { orderId: 20, customer: key, amount: 1 }, { delayMs: 2_500 }); // due last
      await outbox.add(event(), { orderId: 21, customer: key, amount: 1 }, { deliverAt: at }); // same due time:
      await outbox.add(event(), { orderId: 22, customer: key, amount: 1 }, { deliverAt: at }); // insertion order
      await outbox.add(event(), { orderId: 23, customer: key, amount: 1 }); // now, past the waiting ones
    });
    await waitUntil('the unscheduled message arrived', async () => arrived(23), 10_000, 20);
    expect(arrived(20) ?? arrived(21) ?? arrived(22)).toBeUndefined();
    await waitUntil('every scheduled message arrived', async () => arrived(20), 10_000, 20);
    await inTransaction((outbox) => outbox.add(event(), { orderId: 24, customer: key, amount: 1 }));
    await waitUntil('the last message arrived', async () => arrived(24), 10_000, 20);
    const order = (await witness.settle()).filter((a) => a.customer === key).map((a) => a.orderId);
    expect(order).toEqual([23, 21, 22, 20, 24]);
  });

  it('refuses a bad schedule in the writing transaction, which then writes nothing', async () => {
    await expect(
      inTransaction(async (outbox) => {
        await outbox.add(event(), { orderId: 30, customer: 'c30', amount: 1 });
        await outbox.add(
          event(),
          { orderId: 31, customer: 'c31', amount: 1 },
          { delayMs: 1_000, deliverAt: new Date() },
        );
      }),
    ).rejects.toThrow(InvalidScheduleError);
    await expect(
      inTransaction((outbox) =>
        outbox.add(event(), { orderId: 32, customer: 'c32', amount: 1 }, { delayMs: -5 }),
      ),
    ).rejects.toThrow(/delayMs must be a finite number of milliseconds, 0 or more, got -5/);
    const rows = await readOutboxRows(db);
    expect(rows.filter((r) => ['c30', 'c31', 'c32'].includes(r.key))).toEqual([]);
    const [{ waiting }] = await db.query<{ waiting: number | string }>(
      'select count(*) as waiting from messaging_outbox_scheduled',
    );
    expect(Number(waiting)).toBe(0);
  });
});

/** An existing database: the tables of the earlier migrations, with rows, upgrade by running the new one. */
describe.each(EACH_DATABASE)('The scheduled messages migration (%s)', (_, dialect) => {
  const rabbit = new RabbitFixture();
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase(dialect, 'outbox_sched_mig');
  });

  afterAll(async () => {
    await rabbit.cleanup();
    await db?.drop();
  });

  it('upgrades a database the earlier migrations made, keeping its pending rows, and the relay publishes them', async () => {
    const all = dialect === 'postgres' ? MessagingMigrations : MysqlMessagingMigrations;
    // What the list held before the scheduled messages' migration (later ones, e.g. parking, come after it).
    const scheduled = all.findIndex((migration) => /ScheduledMessages/.test(new migration().name ?? ''));
    expect(scheduled).toBeGreaterThan(0);
    const earlier = all.slice(0, scheduled);
    const old = new DataSource({ ...testConnectionOptions(db, 2, false), migrations: earlier });
    await old.initialize();
    await old.runMigrations();
    await old.destroy();

    const destination = uniqueName('upgraded');
    const connection = await rabbit.connect();
    const queue = uniqueName('upgraded_q');
    rabbit.track({ exchanges: [destination], queues: [queue] });
    await bindQueue(connection, destination, queue);
    const reader = await new QueueReader(connection, queue).start();
    // A row written before the upgrade.
    await db.query(
      `insert into messaging_outbox (message_id, destination, type, ${db.quote('key')}, headers, payload, occurred_at,
         created_at, available_at)
       values ('0193b6a0-0000-7000-8000-00000000a001', $1, 'OrderPlaced', 'old', '{}',
               '{"orderId":1,"customer":"old","amount":1}', $2, $2, $2)`,
      [destination, new Date()],
    );
    // Without the migration the application refuses to start, naming it.
    await expect(
      createMessagingApp({ schema: db, transport: rabbitTransport(), migrate: false }),
    ).rejects.toThrow(
      /messaging_outbox_scheduled does not exist\. Run the migration Create(Mysql)?ScheduledMessages/,
    );

    const app = await createMessagingApp({ schema: db, transport: rabbitTransport() });
    try {
      await app
        .get(TransactionHost)
        .run(() =>
          app
            .get(OutboxService)
            .add(orderPlaced(destination), { orderId: 2, customer: 'new', amount: 1 }, { delayMs: 300 }),
        );
      const messages = await reader.waitFor(2, 10_000);
      expect(messages.map((m) => (JSON.parse(m.content.toString()) as { orderId: number }).orderId)).toEqual([
        1, 2,
      ]);
    } finally {
      await reader.stop();
      await app.close();
    }
  });
});
