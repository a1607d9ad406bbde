import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TestingModule } from '@nestjs/testing';
import { MessagingHealthIndicator, ReplicationSlotInvalidatedError } from 'nest-reliable-messaging';
import { CliIo, runMessagingCli } from 'nest-reliable-messaging/testing';
import { KafkaTopics } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { PostgresCluster } from '../../harness/postgres-cluster';
import { proxyUrl } from '../../harness/proxied';
import { createTestDatabase, TestDatabase } from '../../harness/test-database';
import { createLogicalSchema, LogicalSchema, startLogicalCluster } from '../support/logical-cluster';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { ordersConsumerApp } from '../support/orders-consumer-app';
import { OrdersService, ordersWriter } from '../support/orders.fixture';
import { settledVerdict } from '../support/order-load';
import { waitUntil } from '../support/outbox-rows';

const GROUP = 'logical-invalidated';

/**
 * The slot invalidated: the relay is down while the log grows past `max_slot_wal_keep_size` (1 MB segments and
 * a 3 MB limit here), PostgreSQL removes WAL the slot had not read and marks it `lost`. The service says so
 * (startup error, health) with the way out; `nest-messaging relay slot recover` replaces the slot and writes
 * the messages committed since its last confirmed position into the log again from the WAL archive; then
 * every committed order reaches the consumer once, in order.
 */
describe('Logical relay: the slot invalidated, and recovered from the WAL archive', () => {
  const topics = new KafkaTopics();
  const apps: TestingModule[] = [];
  let archive: string;
  let cluster: PostgresCluster;
  let db: LogicalSchema;
  let consumerDb: TestDatabase;
  let topic: string;

  beforeAll(async () => {
    archive = mkdtempSync(path.join(os.tmpdir(), 'wal-archive-'));
    // As root the server runs as the postgres user, which must write the archive.
    if (process.getuid?.() === 0) execFileSync('chown', ['postgres:', archive]);
    cluster = await startLogicalCluster('logical-lost', {
      walSegmentSizeMb: 1,
      settings: {
        max_slot_wal_keep_size: '3MB',
        min_wal_size: '2MB',
        max_wal_size: '4MB',
        archive_mode: 'on',
        archive_command: `cp %p ${archive}/%f`,
      },
    });
    db = await createLogicalSchema(cluster, 'logical_lost');
    consumerDb = await createTestDatabase('postgres', 'logical_lost_consumer');
    topic = await topics.create(uniqueName('orders_lost'), 3);
    apps.push(
      await ordersConsumerApp(consumerDb, { transport: kafkaTransport(), destination: topic, group: GROUP }),
    );
  }, 120_000);

  afterAll(async () => {
    for (const app of apps.splice(0)) await app.close().catch(() => undefined);
    await topics.cleanup();
    await consumerDb?.drop();
    await cluster?.destroy();
    rmSync(archive, { recursive: true, force: true });
  });

  const start = async (relay: object) => {
    const app = await createMessagingApp({
      schema: db,
      transport: kafkaTransport(),
      ...ordersWriter(topic),
      messaging: { relay: { mode: 'logical', ...relay } },
    });
    apps.push(app);
    return app;
  };
  const place = async (app: TestingModule, from: number, to: number) => {
    for (let seq = from; seq <= to; seq++)
      await app.get(OrdersService).place(`customer-${seq % 4}`, seq, seq);
  };

  // claim: C-20, C-95
  it('says the slot was invalidated and how to recover; the recovery loses nothing', async () => {
    const relay = await start({});
    await place(relay, 1, 10);
    await waitUntil('the first orders are handled', async () => {
      const verdict = await settledVerdict(db, consumerDb, GROUP, 100);
      return verdict.lost.length === 0;
    });
    await relay.close();

    // The relay is down; a writer goes on; the log grows until PostgreSQL gives the slot up.
    const writer = await start({ enabled: false });
    await place(writer, 11, 30);
    await cluster.query('create table filler (id serial, pad text)');
    await waitUntil(
      'the slot is invalidated',
      async () => {
        await cluster.query(
          "insert into filler (pad) select repeat('x', 1000) from generate_series(1, 1500)",
        );
        await cluster.query('select pg_switch_wal()');
        await cluster.query('checkpoint');
        const [slot] = await cluster.query<{ wal_status: string }>(
          'select wal_status from pg_replication_slots where slot_name = $1',
          [db.names.slot],
        );
        return slot.wal_status === 'lost';
      },
      60_000,
      200,
    );
    await place(writer, 31, 40); // written after the invalidation: in the log, in no slot

    const health = await writer.get(MessagingHealthIndicator).relay();
    expect(health.relay).toMatchObject({ status: 'down', error: 'the replication slot was invalidated' });
    const restarted = start({});
    await expect(restarted).rejects.toThrow(ReplicationSlotInvalidatedError);
    await expect(restarted).rejects.toThrow(`nest-messaging relay slot recover --slot ${db.names.slot}`);

    const dryRun = await cli(['--dry-run']);
    expect(dryRun.err).toBe('');
    expect(dryRun.out).toMatch(/Would recover (\d+) message/);
    expect(
      await cluster.query('select 1 from pg_replication_slots where wal_status = $1', ['lost']),
    ).toHaveLength(1);
    const recovered = await cli([]);
    expect(recovered).toMatchObject({ code: 0, err: '' });
    const count = Number(/Recovered (\d+) message/.exec(recovered.out)?.[1]);
    expect(count).toBeGreaterThanOrEqual(30); // 11-40, and maybe a few before whose confirmation was not saved

    await start({});
    const verdict = await settledVerdict(db, consumerDb, GROUP);
    expect(verdict.committed).toBe(40);
    expect(verdict.lost).toEqual([]);
    expect(verdict.appliedTwice).toEqual([]);
    expect(verdict.outOfOrder).toEqual([]);
  });

  // Defect F5 (c): a recovery that failed after the slot was replaced could not be run again ("not
  // invalidated: nothing to recover"), and the messages it had not written yet were lost.
  it('a recovery that fails after it replaced the slot is finished by running it again', async () => {
    // The relays of the case before go (the consumer stays): nobody reads the slot, so that it falls behind.
    for (const app of apps.splice(1)) await app.close();
    const relay = await start({});
    await place(relay, 41, 45);
    await waitUntil(
      'the orders are handled',
      async () => (await settledVerdict(db, consumerDb, GROUP, 100)).lost.length === 0,
    );
    await relay.close();
    const writer = await start({ enabled: false });
    await place(writer, 46, 60);
    await waitUntil(
      'the slot is invalidated again',
      async () => {
        await cluster.query(
          "insert into filler (pad) select repeat('x', 1000) from generate_series(1, 1500)",
        );
        await cluster.query('select pg_switch_wal()');
        await cluster.query('checkpoint');
        const [slot] = await cluster.query<{ wal_status: string }>(
          'select wal_status from pg_replication_slots where slot_name = $1',
          [db.names.slot],
        );
        return slot.wal_status === 'lost';
      },
      60_000,
      200,
    );
    // The connection is cut as the recovery writes its first batch: after the slot was replaced.
    const link = await proxyUrl(cluster.url, 'postgres');
    void link.proxy.on({
      direction: 'upstream',
      match: (f) => /pg_logical_emit_message/.test(f.query ?? ''),
      action: 'cut',
    });
    const progressFile = path.join(archive, '..', `${path.basename(archive)}-progress.json`);
    try {
      const failed = await cli(['--progress-file', progressFile], link.url);
      expect(failed.code).not.toBe(0);
    } finally {
      await link.proxy.close();
    }
    const [replaced] = await cluster.query<{ wal_status: string }>(
      'select wal_status from pg_replication_slots where slot_name = $1',
      [db.names.slot],
    );
    expect(replaced.wal_status).not.toBe('lost');
    const resumed = await cli(['--progress-file', progressFile]);
    expect(resumed).toMatchObject({ code: 0, err: '' });
    expect(resumed.out).toMatch(/Resumed the recovery/);

    await start({});
    const verdict = await settledVerdict(db, consumerDb, GROUP);
    expect(verdict.committed).toBe(60);
    expect(verdict.lost).toEqual([]);
    expect(verdict.appliedTwice).toEqual([]);
    expect(verdict.outOfOrder).toEqual([]);
  });

  async function cli(extra: string[], databaseUrl = cluster.url) {
    let out = '';
    let err = '';
    const io: CliIo = {
      env: { MESSAGING_RELAY_DATABASE_URL: databaseUrl },
      out: (text) => void (out += text),
      err: (text) => void (err += text),
      cwd: process.cwd(),
    };
    const args = [
      'relay',
      'slot',
      'recover',
      '--slot',
      db.names.slot,
      '--wal-dir',
      archive,
      path.join(cluster.dataDir, 'pg_wal'),
      '--pg-waldump',
      path.join(cluster.binDir, 'pg_waldump'),
      ...extra,
    ];
    return { code: await runMessagingCli(args, io), out, err };
  }
});
