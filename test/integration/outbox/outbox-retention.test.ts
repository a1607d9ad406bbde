import { TestingModule } from '@nestjs/testing';
import { OutboxRetention, OutboxStore } from 'nest-reliable-messaging/testing';
import { uniqueName } from '../../harness/names';
import { createTestDatabase, EACH_DATABASE, TestDatabase, TestDialect } from '../../harness/test-database';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { readOutboxRows } from '../support/outbox-rows';

/**
 * Retention deletes sent rows once they are older than `retention.sentRetentionMs`, a small batch per
 * statement, in one instance at a time; it never touches pending rows or recently sent ones.
 */
describe.each(EACH_DATABASE)('Outbox retention (%s)', (_, dialect) => {
  const RETENTION_MS = 60 * 60_000;
  const BATCH = 4;
  const destination = uniqueName('orders_retention');
  const sql = retentionSql(dialect);
  let db: TestDatabase;
  const apps: TestingModule[] = [];

  beforeAll(async () => {
    db = await createTestDatabase(dialect, 'outbox_retention');
    // Two instances on one table. No relay: the rows' states are set by the test. The interval is a day
    // away, so only the test's purge() calls delete.
    for (let i = 0; i < 2; i++) {
      apps.push(
        await createMessagingApp({
          schema: db,
          transport: kafkaTransport(),
          messaging: {
            serviceName: `retention-${i}`,
            relay: { enabled: false },
            retention: { sentRetentionMs: RETENTION_MS, batchSize: BATCH, intervalMs: 86_400_000 },
          },
        }),
      );
    }
  });

  afterAll(async () => {
    for (const app of apps.splice(0)) await app.close();
    await db.drop();
  });

  /** Inserts `count` rows of `key`; `sentAgoMs` undefined leaves them pending. */
  const insertRows = async (key: string, count: number, sentAgoMs?: number) => {
    await db.query(sql.insertRows, [destination, key, sentAgoMs ?? null, count]);
  };
  const keysLeft = async () => {
    const counts: Record<string, number> = {};
    for (const row of await readOutboxRows(db)) counts[row.key] = (counts[row.key] ?? 0) + 1;
    return counts;
  };

  it('deletes sent rows past the retention in small batches, and keeps pending and recent ones', async () => {
    await insertRows('old', 10, 2 * RETENTION_MS);
    await insertRows('pending', 3);
    await insertRows('old-but-pending', 2); // created long ago but never sent: must stay
    await db.query(sql.ageThreeDays, ['old-but-pending']);
    await insertRows('recent', 5, RETENTION_MS / 2);

    const store = apps[0].get(OutboxStore);
    const purgeSent = jest.spyOn(store, 'purgeSent');
    const deleted = await apps[0].get(OutboxRetention).purge();

    expect(deleted).toBe(10);
    expect(purgeSent.mock.calls).toEqual([
      [RETENTION_MS, BATCH],
      [RETENTION_MS, BATCH],
      [RETENTION_MS, BATCH],
    ]);
    expect(await Promise.all(purgeSent.mock.results.map((r) => r.value as Promise<number>))).toEqual([
      4, 4, 2,
    ]);
    expect(await keysLeft()).toEqual({ pending: 3, 'old-but-pending': 2, recent: 5 });
    purgeSent.mockRestore();
    await db.query(`delete from messaging_outbox`);
  });

  // claim: C-35
  it('lets one instance purge at a time: another waits for nothing and deletes nothing', async () => {
    await insertRows('old', 6, 2 * RETENTION_MS);
    const store = apps[0].get(OutboxStore);
    // Hold the retention lock as another instance's purge would, from a session of our own.
    await sql.holdLock(db, store.tables.outbox);

    // Resolves while the lock is still held (a purge that waited for it would hang here until the test's
    // timeout, since the holder commits only afterwards).
    expect(await apps[0].get(OutboxRetention).purge()).toBe(0);
    expect(await keysLeft()).toEqual({ old: 6 });

    await sql.releaseLock(db, store.tables.outbox);
    expect(await apps[0].get(OutboxRetention).purge()).toBe(6);
    expect(await keysLeft()).toEqual({});
  });

  it('deletes every expired row exactly once when two instances purge at the same time', async () => {
    await insertRows('old', 100, 2 * RETENTION_MS);
    await insertRows('recent', 3, 1_000);
    const deleted = await Promise.all(apps.map((app) => app.get(OutboxRetention).purge()));
    // Whoever loses the lock stops at once; whoever holds it goes on (at most 100 batches a round).
    const rest = await Promise.all(apps.map((app) => app.get(OutboxRetention).purge()));
    console.log(
      `[outbox-retention ${dialect}] concurrent purges deleted ${deleted.join(' + ')}, then ${rest.join(' + ')}`,
    );
    expect([...deleted, ...rest].reduce((a, b) => a + b, 0)).toBe(100);
    expect(await keysLeft()).toEqual({ recent: 3 });
  });
});

/** The fixture's SQL per dialect, and how another instance's purge holds the retention lock. */
function retentionSql(dialect: TestDialect) {
  if (dialect === 'postgres') {
    return {
      insertRows: `insert into messaging_outbox (message_id, destination, type, key, payload, occurred_at, sent_at)
        select gen_random_uuid(), $1, 'OrderPlaced', $2, '{}'::jsonb, now(),
               case when $3::bigint is null then null else now() - $3::bigint * interval '1 millisecond' end
        from generate_series(1, $4::int)`,
      ageThreeDays: `update messaging_outbox set created_at = now() - interval '3 days' where key = $1`,
      holdLock: (db: TestDatabase, table: string) =>
        db.query('select pg_advisory_lock(hashtext($1))', [`messaging-outbox-retention:${table}`]),
      releaseLock: (db: TestDatabase, table: string) =>
        db.query('select pg_advisory_unlock(hashtext($1))', [`messaging-outbox-retention:${table}`]),
    };
  }
  // The purge's named lock is per database (the store derives its name from it, as here).
  const lockName = "concat('messaging-outbox-purge:', left(sha2(database(), 256), 32))";
  return {
    insertRows: `insert into messaging_outbox
        (message_id, destination, type, \`key\`, headers, payload, occurred_at, created_at, available_at, sent_at)
      with recursive s (i) as (select 1 union all select i + 1 from s where i < $4)
      select uuid(), $1, 'OrderPlaced', $2, '{}', '{}', utc_timestamp(6), utc_timestamp(6), utc_timestamp(6),
             utc_timestamp(6) - interval $3 * 1000 microsecond
      from s`,
    ageThreeDays:
      'update messaging_outbox set created_at = utc_timestamp(6) - interval 3 day where `key` = $1',
    holdLock: (db: TestDatabase) => db.query(`select get_lock(${lockName}, 0)`),
    releaseLock: (db: TestDatabase) => db.query(`select release_lock(${lockName})`),
  };
}
