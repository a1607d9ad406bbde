import { DataSource } from 'typeorm';
import { MessagingAdminMigrations, MessagingMigrations } from 'nest-reliable-messaging';
import { PostgresRedriveLedger } from 'nest-reliable-messaging/redrive';
import { createTestSchema, TestSchema } from '../../harness/postgres';

/** What the changelog gives to drop the admin tables an earlier `MessagingMigrations` made in a service's database. */
const DROP_ADMIN_TABLES = [
  'drop table if exists messaging_console_plan, messaging_redrive_audit_head, messaging_redrive_nonce, ' +
    'messaging_redrive_keyring, messaging_redrive_topology, messaging_redrive_audit cascade',
  'drop function if exists messaging_console_plan_write_once(), messaging_redrive_append_only(), ' +
    'messaging_redrive_audit_chain(), messaging_redrive_audit_append_only(), messaging_redrive_audit_field(text)',
  "delete from migrations where name in ('CreateRedriveLedger1764892800000', 'ChainRedriveAudit1764979200000', " +
    "'CreateConsolePlans1765065600000', 'PinRedriveKeyring1765238400000', 'PinRedriveTopology1765324800000')",
];

/** The admin migrations `MessagingMigrations` held before issue 37 (the plan store of issue 40 came later). */
const EARLIER_ADMIN = MessagingAdminMigrations.filter(
  (m) => m.name !== 'CreateRedriveBulkPlans1765497600000',
);

/**
 * Issue 37 item 6: a service's database gets the outbox, the inbox and the attempts table from
 * `MessagingMigrations`, not the admin database's tables (the redrive ledger, the console's plans), which
 * `MessagingAdminMigrations` (`nest-messaging db migrate`) create.
 */
describe('The migrations, split between a service and the admin database', () => {
  const schemas: TestSchema[] = [];

  afterAll(async () => {
    await Promise.all(schemas.map((s) => s.drop()));
  });

  async function schema(): Promise<TestSchema> {
    const created = await createTestSchema('migrations');
    schemas.push(created);
    return created;
  }

  async function migrate(db: TestSchema, migrations: DataSource['options']['migrations']): Promise<string[]> {
    const dataSource = new DataSource({ type: 'postgres', url: db.databaseUrl, schema: db.name, migrations });
    await dataSource.initialize();
    try {
      return (await dataSource.runMigrations({ transaction: 'each' })).map((m) => m.name);
    } finally {
      await dataSource.destroy();
    }
  }

  async function tables(db: TestSchema): Promise<string[]> {
    const rows = await db.query<{ table_name: string }>(
      'select table_name from information_schema.tables where table_schema = $1 order by table_name',
      [db.name],
    );
    return rows.map((r) => r.table_name);
  }

  async function functions(db: TestSchema): Promise<string[]> {
    const rows = await db.query<{ proname: string }>(
      'select p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = $1',
      [db.name],
    );
    return rows.map((r) => r.proname);
  }

  it("creates only the service's tables in a service's database", async () => {
    const db = await schema();
    await migrate(db, MessagingMigrations);
    expect(await tables(db)).toEqual([
      'messaging_attempts',
      'messaging_inbox',
      'messaging_outbox',
      'messaging_outbox_scheduled',
      'messaging_parked',
      'migrations',
    ]);
  });

  it('creates the admin tables, and only those, with nest-messaging db migrate', async () => {
    const db = await schema();
    expect(await PostgresRedriveLedger.migrate({ url: db.databaseUrl, schema: db.name })).toEqual(
      MessagingAdminMigrations.map((m) => m.name),
    );
    expect(await tables(db)).toEqual([
      'messaging_console_plan',
      'messaging_redrive_audit',
      'messaging_redrive_audit_head',
      'messaging_redrive_bulk_item',
      'messaging_redrive_bulk_plan',
      'messaging_redrive_keyring',
      'messaging_redrive_nonce',
      'messaging_redrive_topology',
      'migrations',
    ]);
  });

  it('upgrades a database that ran the earlier list: nothing pending; the documented SQL drops the admin tables', async () => {
    const db = await schema();
    await migrate(db, [...MessagingMigrations, ...EARLIER_ADMIN]); // what MessagingMigrations was
    expect(await migrate(db, MessagingMigrations)).toEqual([]);
    expect(await migrate(db, EARLIER_ADMIN)).toEqual([]);

    for (const sql of DROP_ADMIN_TABLES) await db.query(sql);
    expect(await tables(db)).toEqual([
      'messaging_attempts',
      'messaging_inbox',
      'messaging_outbox',
      'messaging_outbox_scheduled',
      'messaging_parked',
      'migrations',
    ]);
    expect((await functions(db)).filter((f) => /redrive|console/.test(f))).toEqual([]);
    expect(await migrate(db, MessagingMigrations)).toEqual([]);
  });
});
