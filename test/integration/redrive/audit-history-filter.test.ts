import { PostgresRedriveLedger, RedriveAuditEntry } from 'nest-reliable-messaging/redrive';
import { createTestSchema, TestSchema } from '../../harness/postgres';

/**
 * Issue 29, item 6: the console's audit log is paged and filtered by actor, action and time in the
 * database (keyset paging on the entry id), not by reading everything.
 */
describe('The audit log, filtered and paged (issue 29)', () => {
  let db: TestSchema;
  let ledger: PostgresRedriveLedger;
  let splitAt: Date;

  const entry = (actor: string, action: RedriveAuditEntry['action'], n: number): RedriveAuditEntry => ({
    action,
    actor,
    transport: 'rabbitmq',
    source: n % 2 === 0 ? 'a.g.dlq' : 'b.g.dlq',
    outcome: action === 'ACCESS' ? 'SIGNED_IN' : 'PLANNED',
    detail: `entry ${n}`,
  });

  beforeAll(async () => {
    db = await createTestSchema('audit_filter');
    await PostgresRedriveLedger.migrate({ url: db.databaseUrl, schema: db.name });
    ledger = await PostgresRedriveLedger.connect({ url: db.databaseUrl, schema: db.name });
    for (let n = 0; n < 30; n++) await ledger.record(entry(n % 3 === 0 ? 'alice' : 'bob', 'PLAN', n));
    // Entries carry the database's time to the millisecond: the next ones are recorded a few ms later.
    await db.query('select pg_sleep(0.005)');
    for (let n = 30; n < 40; n++) await ledger.record(entry('alice', 'ACCESS', n));
    splitAt = (await ledger.history({ action: 'ACCESS', limit: 10 }))[0].at;
  });

  afterAll(async () => {
    await ledger?.close();
    await db?.drop();
  });

  const details = (entries: Array<{ detail?: string }>) => entries.map((e) => Number(e.detail?.slice(6)));

  it('filters by actor, action, source and time, newest last', async () => {
    expect(details(await ledger.history({ actor: 'alice', action: 'PLAN', limit: 100 }))).toEqual([
      0, 3, 6, 9, 12, 15, 18, 21, 24, 27,
    ]);
    expect(details(await ledger.history({ action: 'ACCESS', limit: 3 }))).toEqual([37, 38, 39]);
    expect(details(await ledger.history({ from: splitAt, limit: 100 }))).toEqual([
      30, 31, 32, 33, 34, 35, 36, 37, 38, 39,
    ]);
    expect(details(await ledger.history({ to: splitAt, actor: 'bob', source: 'b.g.dlq', limit: 4 }))).toEqual(
      [19, 23, 25, 29],
    );
  });

  it('pages back with before and forward with after, on the entry id', async () => {
    const latest = await ledger.history({ limit: 10 });
    expect(details(latest)).toEqual([30, 31, 32, 33, 34, 35, 36, 37, 38, 39]);
    const older = await ledger.history({ before: latest[0].id, limit: 10 });
    expect(details(older)).toEqual([20, 21, 22, 23, 24, 25, 26, 27, 28, 29]);
    const back = await ledger.history({ after: older[older.length - 1].id, limit: 5 });
    expect(details(back)).toEqual([30, 31, 32, 33, 34]);
    const filtered = await ledger.history({ actor: 'bob', before: older[0].id, limit: 3 });
    expect(details(filtered)).toEqual([16, 17, 19]);
    // A cursor typed by hand that is not an id is ignored, not sent to the database as text.
    expect(details(await ledger.history({ before: "1'; drop table x; --", limit: 2 }))).toEqual([38, 39]);
  });
});
