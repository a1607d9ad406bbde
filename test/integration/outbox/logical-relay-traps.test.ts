import { randomUUID } from 'node:crypto';
import { TestingModule } from '@nestjs/testing';
import * as amqp from 'amqplib';
import { Client } from 'pg';
import { encodeLogicalMessage, LogicalRelay } from 'nest-reliable-messaging/testing';
import { FaultProxy } from '../../harness/fault-proxy';
import { uniqueName } from '../../harness/names';
import { PostgresCluster } from '../../harness/postgres-cluster';
import { proxyUrl } from '../../harness/proxied';
import { RabbitFixture } from '../../harness/rabbitmq';
import { createLogicalSchema, LogicalSchema, startLogicalCluster } from '../support/logical-cluster';
import { createMessagingApp, rabbitTransport } from '../support/messaging-app';
import { OrdersService, ordersWriter } from '../support/orders.fixture';
import { readOutboxRows, waitUntil } from '../support/outbox-rows';
import { QueueReader } from '../support/queue-reader';

/** The server ends a silent walsender after this; the relay takes a silent link for dead after twice this. */
const WAL_SENDER_TIMEOUT_MS = 3_000;

/**
 * The logical relay where CDC relays have lost or duplicated messages (Debezium on pgoutput: a decoded
 * message reports the end of its record, several events share a position, `pg_logical_emit_message()`
 * returns another position than the slot shows), and the review's F4 and F9, on a private cluster over
 * RabbitMQ. Each case reads what reached a queue of its own.
 */
describe('Logical relay: the traps of CDC relays, a rolling change of mode, a silent link', () => {
  const rabbit = new RabbitFixture();
  const readers: QueueReader[] = [];
  const apps: TestingModule[] = [];
  const proxies: FaultProxy[] = [];
  let cluster: PostgresCluster;
  let connection: amqp.ChannelModel;

  beforeAll(async () => {
    cluster = await startLogicalCluster('logical-traps', {
      settings: { wal_sender_timeout: `${WAL_SENDER_TIMEOUT_MS}ms` },
    });
    connection = await rabbit.connect();
  }, 120_000);

  afterAll(async () => {
    for (const reader of readers) await reader.stop();
    for (const app of apps.splice(0)) await app.close().catch(() => undefined);
    for (const proxy of proxies) await proxy.close();
    await rabbit.cleanup();
    await cluster?.destroy();
  });

  /** A schema with its slot, a destination with a queue bound to it (unless `bound` is false), an app relaying. */
  async function stack(name: string, options: { databaseUrl?: string; bound?: boolean } = {}) {
    const db = await createLogicalSchema(cluster, name);
    const destination = uniqueName(name);
    const queue = uniqueName(`${name}_q`);
    rabbit.track({ exchanges: [destination], queues: [queue] });
    const channel = await connection.createChannel();
    await channel.assertExchange(destination, 'topic', { durable: true });
    if (options.bound !== false) {
      await channel.assertQueue(queue, { durable: false });
      await channel.bindQueue(queue, destination, '#');
    }
    await channel.close();
    const reader = options.bound === false ? undefined : await new QueueReader(connection, queue).start();
    if (reader) readers.push(reader);
    const start = async (databaseUrl = options.databaseUrl) => {
      const schema = databaseUrl ? { ...db, connection: { ...db.connection, url: databaseUrl } } : db;
      const app = await createMessagingApp({
        schema: schema,
        transport: rabbitTransport(),
        ...ordersWriter(destination),
        messaging: { relay: { mode: 'logical', retryInitialDelayMs: 50, retryMaxDelayMs: 200 } },
      });
      apps.push(app);
      await waitUntil(
        'the relay reads the slot',
        async () => app.get(LogicalRelay).status().state === 'reading',
      );
      return app;
    };
    return { db, destination, reader, start };
  }

  /** A pg client on the schema, for writes the way another writer makes them. */
  async function client(db: LogicalSchema): Promise<Client> {
    const c = new Client({ connectionString: cluster.url, options: `-c search_path="${db.name}"` });
    await c.connect();
    return c;
  }

  /** Our message for `customer`'s `seq`, as OutboxService writes it, emitted by `c` (transactional unless said). */
  const emit = (
    c: Client,
    db: LogicalSchema,
    destination: string,
    customer: string,
    seq: number,
    transactional = true,
  ) =>
    c.query('select pg_logical_emit_message($1, $2, $3::text)', [
      transactional,
      db.names.prefix,
      encodeLogicalMessage({
        messageId: randomUUID(),
        destination,
        type: 'OrderPlaced',
        key: customer,
        headers: {},
        payloadJson: JSON.stringify({ orderId: seq, customer, amount: 1, seq }),
        occurredAt: new Date(),
      }),
    ]);

  const seqsOf = (messages: amqp.ConsumeMessage[], customer?: string) =>
    messages
      .map((m) => JSON.parse(m.content.toString()) as { customer: string; seq: number })
      .filter((e) => customer === undefined || e.customer === customer)
      .map((e) => e.seq);

  it('a transaction with many messages, interleaved with another: every message once, each key in commit order', async () => {
    const { db, destination, reader, start } = await stack('traps_interleaved');
    await start();
    const [first, second] = [await client(db), await client(db)];
    try {
      await first.query('begin');
      await second.query('begin');
      for (let i = 1; i <= 40; i++) {
        await emit(first, db, destination, `a${i % 2}`, i);
        await emit(second, db, destination, `b${i % 2}`, i);
      }
      await second.query('commit'); // the later starter commits first: its messages go first
      await first.query('commit');
    } finally {
      await first.end();
      await second.end();
    }
    await reader!.waitFor(80);
    const messages = await reader!.settle();
    expect(new Set(messages.map((m) => m.properties.messageId as string)).size).toBe(80);
    for (const customer of ['a0', 'a1', 'b0', 'b1']) {
      const seqs = seqsOf(messages, customer);
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    }
    // The second transaction's messages all before the first's: commit order.
    const firstOfA = messages.findIndex((m) => seqsOf([m], 'a0').length + seqsOf([m], 'a1').length > 0);
    const lastOfB =
      messages.length -
      1 -
      [...messages].reverse().findIndex((m) => seqsOf([m], 'b0').length + seqsOf([m], 'b1').length > 0);
    expect(lastOfB).toBeLessThan(firstOfA);
  });

  it('the last decoded record a message, and a non-transactional message under our prefix: nothing read twice, nothing skipped past', async () => {
    const { db, destination, reader, start } = await stack('traps_last');
    const app = await start();
    await app.get(OrdersService).place('c', 1, 1); // its message is the last record before the commit
    await reader!.waitFor(1);
    const stray = await client(db);
    try {
      await emit(stray, db, destination, 'c', 99, false); // non-transactional: no commit, never ours
    } finally {
      await stray.end();
    }
    await app.get(OrdersService).place('c', 2, 2);
    await reader!.waitFor(2);
    await waitUntil('the slot confirms everything', async () => {
      const slot = await app.get(LogicalRelay).slotState();
      return slot?.lagBytes !== undefined && slot.lagBytes < 1_024;
    });
    // A restart reads from the confirmed position: nothing of the above again.
    await app.close();
    const again = await start();
    await again.get(OrdersService).place('c', 3, 3);
    await reader!.waitFor(3);
    expect(seqsOf(await reader!.settle())).toEqual([1, 2, 3]);
  });

  // claim: C-90
  it('a crash between publishing and confirming the position: the messages go again after the restart, none is lost', async () => {
    const { db, reader, start } = await stack('traps_unconfirmed');
    const proxy = await proxyUrl(cluster.url, 'postgres');
    proxies.push(proxy.proxy);
    // Every status update (CopyData 'r') the relay sends is dropped: PostgreSQL never learns what was published.
    void proxy.proxy.on({
      direction: 'upstream',
      match: (f) => f.bytes[0] === 0x64 && f.bytes[5] === 0x72,
      action: 'drop',
      times: Number.MAX_SAFE_INTEGER,
    });
    const app = await start(proxy.url);
    const orders = app.get(OrdersService);
    for (let seq = 1; seq <= 5; seq++) await orders.place('d', seq, seq);
    await reader!.waitFor(5);
    await app.close(); // its last confirm is dropped too: the slot still stands before the five
    const slot = await waitUntil('the slot is free', async () => {
      const state = (
        await db.sql<{ active: boolean }>('select active from pg_replication_slots where slot_name = $1', [
          db.names.slot,
        ])
      )[0];
      return state && !state.active && state;
    });
    expect(slot.active).toBe(false);

    const restarted = await start(undefined); // straight to the server this time
    await restarted.get(OrdersService).place('d', 6, 6);
    await reader!.waitFor(11);
    const seqs = seqsOf(await reader!.settle());
    expect(seqs).toEqual([1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 6]);
  });

  // Defect F4: pending keys were read once, at the start, and refreshed only while some key was parked.
  // claim: C-96
  it('a rolling change from poll to logical: a message of a key with a pending row (a poll-mode writer) waits behind it', async () => {
    const { db, destination, start } = await stack('traps_rolling', { bound: false });
    const app = await start();
    // A poll-mode instance's row for key K, not sent yet (nothing is bound: the polling relay cannot send it).
    await db.query(
      `insert into messaging_outbox (message_id, destination, type, key, headers, payload, occurred_at)
       values ($1, $2, 'OrderPlaced', 'K', '{}', $3::jsonb, now())`,
      [randomUUID(), destination, JSON.stringify({ orderId: 0, customer: 'K', amount: 1, seq: 0 })],
    );
    await new Promise((resolve) => setTimeout(resolve, 2_500)); // past the relay's look at pending keys
    await app.get(OrdersService).place('K', 1, 1);
    const rows = await waitUntil('the message is parked behind the row', async () => {
      const all = (await readOutboxRows(db)).filter((r) => r.destination === destination);
      return all.length === 2 && all;
    });
    expect(rows[1].lastError).toBe('behind a parked message of its key');
  });

  // Defect F9: the stream had no inactivity timeout; on a link that drops packets silently the reader kept
  // `reading` until TCP gave up (about 15 minutes), its health up.
  it('a link that goes silent: the relay gives up on it after about 2 x wal_sender_timeout and reads again once it is back', async () => {
    const proxy = await proxyUrl(cluster.url, 'postgres');
    proxies.push(proxy.proxy);
    const { reader, start } = await stack('traps_silent', { databaseUrl: proxy.url });
    const app = await start();
    proxy.proxy.blackHole(undefined, { silent: true });
    await waitUntil(
      'the relay no longer reads the silent link',
      async () => app.get(LogicalRelay).status().state !== 'reading',
      60_000,
    );
    await proxy.proxy.heal();
    await waitUntil('it reads again', async () => app.get(LogicalRelay).status().state === 'reading', 60_000);
    await app.get(OrdersService).place('e', 1, 1);
    await reader!.waitFor(1);
  });
});
