import { TestingModule } from '@nestjs/testing';
import { Client } from 'pg';
import { MysqlQueryRunner } from 'typeorm/driver/mysql/MysqlQueryRunner';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';
import { RelayOptions } from 'nest-reliable-messaging';
import { OutboxRelay, OutboxStore } from 'nest-reliable-messaging/testing';
import { KafkaTopics } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { TestSchema } from '../../harness/postgres';
import { createTestDatabase, EACH_DATABASE, postgresOnly, TestDatabase } from '../../harness/test-database';
import { createMessagingApp, kafkaTransport, nextRelayRound } from '../support/messaging-app';
import { OrdersService, ordersWriter } from '../support/orders.fixture';
import { percentile, waitUntil } from '../support/outbox-rows';
import { TopicReader } from '../support/topic-reader';

/**
 * The relay is woken by the commit that wrote outbox rows (and, on PostgreSQL with `relay.notify`, by NOTIFY
 * from other instances), so it publishes at once while the safety poll stays slow; a row another instance
 * committed reaches a relay at its safety poll; an idle service sends claims and nothing else. With a safety
 * poll of an hour, a record that arrives at all was published by a wake-up. Latencies are printed; the ones a
 * poll or NOTIFY bounds are held to a generous bound (twice the poll; 5 s for NOTIFY), the commit wake-up's
 * p50 is not asserted (the bench measures it; the relay's unit spec counts claims per poll with fake timers).
 */
describe.each(EACH_DATABASE)('Outbox relay latency and idle cost (%s + Kafka)', (_, dialect) => {
  const SLOW_POLL_MS = 3_600_000;
  const topics = new KafkaTopics();
  const schemas: TestDatabase[] = [];
  const apps: TestingModule[] = [];
  const readers: TopicReader[] = [];

  afterAll(async () => {
    for (const reader of readers) await reader.stop();
    for (const app of apps.splice(0)) await app.close();
    await topics.cleanup();
    for (const schema of schemas) await schema.drop();
  });

  const newSchema = async (prefix: string) => {
    const schema = await createTestDatabase(dialect, prefix);
    schemas.push(schema);
    return schema;
  };
  const newTopic = async (prefix: string) => {
    const topic = await topics.create(uniqueName(prefix));
    readers.push(await new TopicReader(topic).start());
    return { topic, reader: readers[readers.length - 1] };
  };
  const newApp = async (
    schema: TestDatabase,
    topic: string,
    relay: RelayOptions,
    beforeInit?: (app: TestingModule) => void,
  ) => {
    const app = await createMessagingApp({
      schema,
      transport: kafkaTransport(),
      ...ordersWriter(topic),
      messaging: { relay },
      beforeInit,
    });
    apps.push(app);
    return app;
  };
  const closeApp = async (app: TestingModule) => {
    apps.splice(apps.indexOf(app), 1);
    await app.close();
  };

  /** Places orders one by one; for each, the time from the commit to the record's arrival on Kafka. */
  const measure = async (writer: TestingModule, reader: TopicReader, count: number) => {
    const latencies: number[] = [];
    for (let i = 0; i < count; i++) {
      const before = reader.records.length;
      await writer.get(OrdersService).place(`customer-${i % 3}`, i, i);
      const committed = Date.now();
      await reader.waitFor(before + 1);
      latencies.push(Date.now() - committed);
    }
    return latencies;
  };

  // claim: C-26
  it('publishes each commit when it commits, not at the safety poll', async () => {
    const schema = await newSchema('outbox_latency');
    const { topic, reader } = await newTopic('orders_latency');
    const app = await newApp(schema, topic, { pollIntervalMs: SLOW_POLL_MS });
    await measure(app, reader, 1); // warm-up: the producer connects on first use

    const latencies = await measure(app, reader, 20);
    console.log(
      `[outbox-latency ${dialect}] commit → record on Kafka over 20 orders: p50 ${percentile(latencies, 50)} ms, ` +
        `p90 ${percentile(latencies, 90)} ms, max ${Math.max(...latencies)} ms (safety poll ${SLOW_POLL_MS} ms)`,
    );
    await reader.settle();
    expect(new Set(reader.records.map((r) => r.headers['msg.id'])).size).toBe(21);
    await closeApp(app);
  });

  // claim: C-26, C-33
  it('sends claims and looks at the scheduled messages, nothing else, while idle', async () => {
    const POLL_MS = 500;
    const schema = await newSchema('outbox_idle');
    const { topic } = await newTopic('orders_idle');
    let firstRound!: Promise<unknown>;
    const app = await newApp(schema, topic, { pollIntervalMs: POLL_MS }, (starting) => {
      firstRound = nextRelayRound(starting);
    });
    await firstRound; // the round at bootstrap

    // Every statement this process sends goes through pg's Client.query, or TypeORM's MysqlQueryRunner.query
    // (spied, not replaced).
    const query =
      dialect === 'postgres'
        ? jest.spyOn(Client.prototype, 'query')
        : jest.spyOn(MysqlQueryRunner.prototype, 'query');
    const claim = jest.spyOn(app.get(OutboxStore), 'claim');
    const started = Date.now();
    for (let round = 0; round < 4; round++) await nextRelayRound(app); // four safety polls
    const elapsed = Date.now() - started;
    const statements = query.mock.calls.map(([first]) =>
      typeof first === 'string' ? first : (first as { text: string }).text,
    );
    query.mockRestore();

    const claims = claim.mock.calls.length;
    console.log(
      `[outbox-idle ${dialect}] ${elapsed} ms idle with pollIntervalMs ${POLL_MS}: ${claims} claims, ` +
        `${statements.length} statements (${((statements.length * 1000) / elapsed).toFixed(2)} per second)`,
    );
    expect(claims).toBe(4);
    // Each safety poll: one look at the scheduled messages (none due: one statement), then the claim.
    // PostgreSQL: one statement. MySQL/MariaDB: the claim's READ COMMITTED transaction, which ends after the
    // first statement when nothing is pending.
    const perClaim =
      dialect === 'postgres'
        ? [/^with due as/, /^with sent as/]
        : [
            /^select timestampdiff\(microsecond, utc_timestamp\(6\), min\(deliver_at\)\)/,
            /^SET TRANSACTION ISOLATION LEVEL READ COMMITTED$/,
            /^START TRANSACTION$/,
            /^select p\.id,/,
            /^COMMIT$/,
          ];
    expect(statements).toHaveLength(claims * perClaim.length);
    statements.forEach((sql, i) => expect(sql.trim()).toMatch(perClaim[i % perClaim.length]));
    await closeApp(app);
  });

  // Issue 39: the relay's database work per message when commits come one at a time, each published and
  // marked before the next (a steady trickle). PostgreSQL: the claim and the marking, one statement each
  // (3 before: a second claim ran beside every publish and found nothing). MySQL/MariaDB: the claim's
  // READ COMMITTED transaction (SET TRANSACTION, START TRANSACTION, pick, order check, lease, COMMIT) and the
  // marking (11 before: the empty claim beside the publish took 4).
  it('sends the fewest relay statements per message at steady state (PostgreSQL 2, MySQL/MariaDB 7)', async () => {
    const COUNT = 20;
    const schema = await newSchema('outbox_statements');
    const { topic, reader } = await newTopic('orders_statements');
    const app = await newApp(schema, topic, { pollIntervalMs: SLOW_POLL_MS });
    let confirmed = 0;
    app.get(OutboxRelay).onRound((round) => (confirmed += round.confirmed));
    const marked = (count: number) =>
      waitUntil(`${count} rows marked sent`, async () => confirmed >= count, 30_000, 2);
    await measure(app, reader, 1); // warm-up: the producer connects on first use
    await marked(1);

    // Every statement goes through TypeORM's query runner: one per DataSource.query, one per transaction.
    // The writer's transactions are the runners that inserted; every other runner is the relay's.
    const Runner = dialect === 'postgres' ? PostgresQueryRunner : MysqlQueryRunner;
    const query = jest.spyOn(Runner.prototype, 'query');
    for (let i = 0; i < COUNT; i++) {
      await app.get(OrdersService).place(`customer-${i % 3}`, i, i);
      await marked(i + 2);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const calls = query.mock.calls.map(([sql], i) => ({
      sql: sql.trim(),
      runner: query.mock.contexts[i] as unknown,
    }));
    query.mockRestore();
    const writers = new Set(calls.filter((c) => /^insert/i.test(c.sql)).map((c) => c.runner));
    const relayStatements = calls.filter((c) => !writers.has(c.runner)).map((c) => c.sql);
    const perMessage = relayStatements.length / COUNT;
    console.log(
      `[outbox-statements ${dialect}] ${relayStatements.length} relay statements for ${COUNT} messages ` +
        `published one at a time: ${perMessage} per message`,
    );
    expect(perMessage).toBe(dialect === 'postgres' ? 2 : 7);
    await closeApp(app);
  });

  // Issue 39: at 200/s (a commit every 5 ms, each published in a round of its own on a quiet machine) the
  // next commit's claim marks the round before: PostgreSQL one relay statement per message (2 before: the
  // claim and a mark of its own); MySQL/MariaDB unchanged (the claim's transaction and a mark beside it).
  // Measured at load average 30 on 2 cores, where the writer managed 28-36 commits/s: 1.42 before, 1.05 after;
  // at 10 commits/s (a busier moment) 1.36 after.
  it("marks each round with the next commit's claim at 200/s (PostgreSQL ≤ 1.3 relay statements per message)", async () => {
    const COUNT = 100;
    const schema = await newSchema('outbox_statements_200');
    const { topic, reader } = await newTopic('orders_statements_200');
    const app = await newApp(schema, topic, { pollIntervalMs: SLOW_POLL_MS });
    let confirmed = 0;
    app.get(OutboxRelay).onRound((round) => (confirmed += round.confirmed));
    await measure(app, reader, 1); // warm-up: the producer connects on first use
    await waitUntil('the warm-up row marked sent', async () => confirmed >= 1, 30_000, 2);

    const Runner = dialect === 'postgres' ? PostgresQueryRunner : MysqlQueryRunner;
    const query = jest.spyOn(Runner.prototype, 'query');
    const started = Date.now();
    for (let i = 0; i < COUNT; i++) {
      await app.get(OrdersService).place(`customer-${i % 3}`, i, i);
      const next = started + (i + 1) * 5;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Date.now())));
    }
    const elapsed = Date.now() - started;
    await waitUntil(`${COUNT + 1} rows marked sent`, async () => confirmed >= COUNT + 1, 30_000, 2);
    const calls = query.mock.calls.map(([sql], i) => ({
      sql: sql.trim(),
      runner: query.mock.contexts[i] as unknown,
    }));
    query.mockRestore();
    const writers = new Set(calls.filter((c) => /^insert/i.test(c.sql)).map((c) => c.runner));
    const relayStatements = calls.filter((c) => !writers.has(c.runner)).length;
    const perMessage = relayStatements / COUNT;
    console.log(
      `[outbox-statements-200 ${dialect}] ${relayStatements} relay statements for ${COUNT} messages committed ` +
        `in ${elapsed} ms (${Math.round((COUNT * 1000) / elapsed)}/s): ${perMessage.toFixed(2)} per message`,
    );
    // A loaded machine may not commit at 200/s: with commits further apart than the mark's wait (20 ms) each
    // round is marked on its own again, by design (2). The bound holds where the writer kept up to 100/s.
    const keptUp = elapsed <= COUNT * 10;
    expect(perMessage).toBeLessThanOrEqual(dialect === 'postgres' ? (keptUp ? 1.3 : 2) : 7);
    await reader.settle();
    expect(new Set(reader.records.map((r) => r.headers['msg.id'])).size).toBe(COUNT + 1);
    await closeApp(app);
  });

  // claim: C-33
  it("publishes a row another instance committed at this relay's safety poll (no NOTIFY)", async () => {
    const POLL_MS = 1_000;
    const schema = await newSchema('outbox_poll');
    const { topic, reader } = await newTopic('orders_poll');
    // The writer runs no relay, so no after-commit wake-up can reach one: only the other's poll publishes.
    const writer = await newApp(schema, topic, { enabled: false });
    const relay = await newApp(schema, topic, { pollIntervalMs: POLL_MS });
    await measure(writer, reader, 1); // warm-up: the producer connects on first use
    const latencies = await measure(writer, reader, 5);
    console.log(
      `[outbox-poll ${dialect}] commit in an instance without a relay → record on Kafka via another's ` +
        `${POLL_MS} ms safety poll: p50 ${percentile(latencies, 50)} ms, max ${Math.max(...latencies)} ms`,
    );
    // Chapter 4: "at most 1.0 s" with a 1 s poll. The bound is twice that, for a loaded machine: a relay that
    // does not poll at its interval (or publishes only at a later wake-up) fails it.
    expect(latencies).toHaveLength(5);
    for (const latency of latencies) expect(latency).toBeLessThanOrEqual(2 * POLL_MS);
    await closeApp(writer);
    await closeApp(relay);
  });

  /** App A writes without a relay; app B's relay, with a one-minute poll, can only be woken by NOTIFY. */
  const notifyScenario = async (schema: TestSchema, label: string) => {
    const { topic, reader } = await newTopic('orders_notify');
    const writer = await newApp(schema, topic, { enabled: false, notify: true });
    const relay = await newApp(schema, topic, { notify: true, pollIntervalMs: SLOW_POLL_MS });
    const channel = relay.get(OutboxStore).notifyChannel;
    const db = await schema.connect();
    await waitUntil('the relay instance listens', async () => {
      const { rows } = await db.query(
        `select 1 from pg_stat_activity where datname = current_database() and query = $1`,
        [`listen "${channel}"`],
      );
      return rows.length > 0;
    });

    const latencies = await measure(writer, reader, 5);
    console.log(
      `[outbox-notify] ${label}: commit in one instance → record on Kafka via the other: ` +
        `p50 ${percentile(latencies, 50)} ms, max ${Math.max(...latencies)} ms`,
    );
    // With an hour's poll only NOTIFY can have woken the relay; a generous bound says it did so at once.
    expect(latencies).toHaveLength(5);
    for (const latency of latencies) expect(latency).toBeLessThanOrEqual(5_000);
    await closeApp(writer);
    await closeApp(relay);
  };

  // NOTIFY is PostgreSQL's (MySQL and MariaDB refuse relay.notify at startup).
  const pg = postgresOnly(dialect);

  // claim: C-26
  pg('wakes another instance with LISTEN/NOTIFY', async () => {
    await notifyScenario((await newSchema('outbox_notify')) as TestSchema, 'LISTEN/NOTIFY');
  });

  pg('wakes another instance with LISTEN/NOTIFY when the schema name has the maximum length', async () => {
    // PostgreSQL names have at most 63 bytes, and the channel name adds 'messaging_outbox_' to the schema's.
    const schema = (await newSchema('outbox_notify_with_a_long_schema_name_of_63_char')) as TestSchema;
    expect(schema.name.length).toBeGreaterThan(63 - 'messaging_outbox_'.length);
    expect(schema.name.length).toBeLessThanOrEqual(63);
    await notifyScenario(schema, 'LISTEN/NOTIFY, 63-character schema');
  });
});
