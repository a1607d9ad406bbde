import { TestingModule } from '@nestjs/testing';
import * as amqp from 'amqplib';
import { RetryMode } from 'nest-reliable-messaging';
import { PrivateDatabaseServer, startPrivateDatabaseServer } from '../../harness/private-database-server';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { RabbitFixture } from '../../harness/rabbitmq';
import { EACH_DATABASE, TestDatabase } from '../../harness/test-database';
import { rabbitTransport } from '../support/messaging-app';
import { ordersConsumerApp } from '../support/orders-consumer-app';
import { ConsumerProbe, handledOrders } from '../support/orders-consumer.fixture';
import { orderMessage } from '../support/raw-messages';
import { drainQueue, publishRaw } from '../support/rabbit-wire';

/** How long the database stays down: longer than the whole retry budget below (the scenario, not a wait). */
const OUTAGE_MS = 4_000;
/** Three attempts in place, at most 0.1 + 0.2 s apart: far less than the outage. */
const POLICY = { maxAttempts: 3, mode: RetryMode.INLINE, backoff: { initialDelayMs: 100, maxDelayMs: 200 } };

/**
 * A consumer whose database is away longer than its retry budget (a restart on a busy machine). A try that
 * cannot even begin its transaction never reached the handler: it is not the message's failure, so it does
 * not spend the message's attempts. The message waits for the database and is handled once it is back; it
 * used to be dead-lettered after `maxAttempts` failed begins (stop 35's fault run: one dead letter after a
 * database restart, its post delivered all the same).
 */
describe.each(EACH_DATABASE)('A consumer while its database is away (%s, RabbitMQ)', (_, dialect) => {
  const rabbit = new RabbitFixture();
  let server: PrivateDatabaseServer;
  let database: TestDatabase;
  const apps: TestingModule[] = [];

  beforeAll(async () => {
    server = await startPrivateDatabaseServer(dialect, 'consumer-outage');
    const url = await server.createDatabase('outage');
    database = {
      dialect,
      name: 'outage',
      connection:
        dialect === 'postgres'
          ? { type: 'postgres', url, schema: 'public' }
          : { type: 'mariadb', url, timezone: 'Z' },
      query: (sql, params) => server.query(sql, params, 'outage'),
      quote: (identifier) => (dialect === 'postgres' ? `"${identifier}"` : `\`${identifier}\``),
      drop: async () => undefined,
    };
  }, 120_000);

  afterAll(async () => {
    for (const app of apps) await app.close().catch(() => undefined);
    await rabbit.cleanup();
    await server?.destroy();
  }, 60_000);

  /** A consumer of a destination and group of its own (with `policy`, if any), closed after the suite. */
  async function consumer(prefix: string, policy?: typeof POLICY) {
    const destination = uniqueName(prefix);
    const group = uniqueName('g');
    const queue = `${destination}.${group}`;
    rabbit.track({ exchanges: [destination], queues: [queue, `${queue}.dlq`] });
    const probe = new ConsumerProbe();
    const app = await ordersConsumerApp(database, {
      transport: rabbitTransport(),
      destination,
      group,
      probe,
      policy,
    });
    apps.push(app);
    return { destination, group, queue, probe, app };
  }

  for (const mode of ['fast', 'immediate'] as const) {
    // claim: C-50
    test(`handles a message that came while the database was down (${mode} stop), dead-letters nothing`, async () => {
      const { destination, group, queue, app } = await consumer('dbaway', POLICY);
      const connection: amqp.ChannelModel = await rabbit.connect();

      await publishRaw(connection, [orderMessage(destination, { customer: 'k', seq: 1 })]);
      await eventually(async () => expect(await handledOrders(database, group)).toHaveLength(1));

      await server.stop(mode);
      await publishRaw(connection, [orderMessage(destination, { customer: 'k', seq: 2 })]);
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      await server.start();

      await eventually(async () => expect(await handledOrders(database, group)).toHaveLength(2), 30_000);
      expect((await handledOrders(database, group)).map((o) => o.seq)).toEqual([1, 2]);
      expect(await drainQueue(connection, `${queue}.dlq`)).toEqual([]);
      // Nothing is left unacked or waiting in the queue.
      apps.splice(apps.indexOf(app), 1);
      await app.close();
      const channel = await connection.createChannel();
      expect((await channel.checkQueue(queue)).messageCount).toBe(0);
      await channel.close();
    }, 90_000);
  }

  // claim: C-50
  test("handles a message whose handler's connection broke under it, with no retry policy, dead-letters nothing", async () => {
    // The database stops while the handler runs: its next statement and the rollback meet a broken
    // connection. That is the database away, not the handler failing; without a policy it used to be
    // dead-lettered (NO_POLICY) at once (stop 49's tenants fault run).
    const { destination, group, queue, probe, app } = await consumer('dbgone');
    const connection: amqp.ChannelModel = await rabbit.connect();
    let stopped: Promise<void> | undefined;
    probe.onInvocation = () => {
      if (probe.invocations !== 1) return;
      probe.delayMs = 1_500; // the handler is in its transaction, its statement still to come
      stopped = server.stop('fast');
    };
    await publishRaw(connection, [orderMessage(destination, { customer: 'k', seq: 1 })]);
    await eventually(() => expect(stopped).toBeDefined(), 30_000);
    await stopped;
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // its statement fails meanwhile
    probe.delayMs = 0;
    await server.start();

    await eventually(async () => expect(await handledOrders(database, group)).toHaveLength(1), 30_000);
    expect(probe.invocations).toBeGreaterThanOrEqual(2);
    expect(probe.attemptsOf(1).every((attempt) => attempt === 1)).toBe(true); // no attempt spent
    expect(await drainQueue(connection, `${queue}.dlq`)).toEqual([]);
    apps.splice(apps.indexOf(app), 1);
    await app.close();
  }, 90_000);
});
