import {
  InvalidMessagingOptionsError,
  LogicalDecodingUnavailableError,
  ReplicationSlotMissingError,
} from 'nest-reliable-messaging';
import { CliIo, LogicalRelay, runMessagingCli } from 'nest-reliable-messaging/testing';
import { uniqueName } from '../../harness/names';
import { PostgresCluster } from '../../harness/postgres-cluster';
import { createTestDatabase, TestDatabase } from '../../harness/test-database';
import { createLogicalSchema, LogicalSchema, startLogicalCluster } from '../support/logical-cluster';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { OrdersService, ordersWriter } from '../support/orders.fixture';
import { waitUntil } from '../support/outbox-rows';

/**
 * What `relay.mode: 'logical'` needs before a service writes a message, said at startup with how to fix it
 * (wal_level, the role's REPLICATION attribute, the slot; MySQL/MariaDB keep the polling relay), and the admin
 * command that makes, shows and drops the slot (`nest-messaging relay slot`).
 */
describe('Logical relay: startup checks and `nest-messaging relay slot`', () => {
  const topic = uniqueName('orders_logical_setup');
  let cluster: PostgresCluster;
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    cluster = await startLogicalCluster('logical-setup');
  }, 120_000);

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await cluster?.destroy();
  });

  const logical = { relay: { mode: 'logical' as const } };
  const writer = (schema: string | TestDatabase | LogicalSchema, messaging: object = logical) =>
    createMessagingApp({ schema, transport: kafkaTransport(), ...ordersWriter(topic), messaging });

  async function cli(args: string[], databaseUrl = cluster.url) {
    let out = '';
    let err = '';
    const io: CliIo = {
      env: { MESSAGING_RELAY_DATABASE_URL: databaseUrl },
      out: (text) => void (out += text),
      err: (text) => void (err += text),
      cwd: process.cwd(),
    };
    return { code: await runMessagingCli(args, io), out, err };
  }

  it("refuses to start on a server whose wal_level is not 'logical', saying how to set it", async () => {
    const schema = await createTestDatabase('postgres', 'logical_replica'); // the shared server: replica
    cleanups.push(() => schema.drop());
    const [{ wal_level }] = await schema.query<{ wal_level: string }>('show wal_level');
    expect(wal_level).not.toBe('logical');
    const started = writer(schema);
    await expect(started).rejects.toThrow(LogicalDecodingUnavailableError);
    await expect(started).rejects.toThrow(/wal_level is 'replica'.*ALTER SYSTEM SET wal_level = logical/);
  });

  // claim: C-20
  it('refuses to start without the slot, naming the command that creates it', async () => {
    const db = await createLogicalSchema(cluster, 'logical_noslot', { createSlot: false });
    cleanups.push(() => db.drop());
    const started = writer(db);
    await expect(started).rejects.toThrow(ReplicationSlotMissingError);
    await expect(started).rejects.toThrow(`nest-messaging relay slot create --slot ${db.names.slot}`);
  });

  // claim: C-20
  it('refuses a role without the REPLICATION attribute, unless the instance only writes', async () => {
    const db = await createLogicalSchema(cluster, 'logical_role');
    cleanups.push(() => db.drop());
    const role = uniqueName('writer');
    await cluster.query(`create role ${role} login`);
    await cluster.query(`grant all on schema "${db.name}" to ${role}`);
    const asRole = {
      ...db,
      connection: { ...db.connection, url: cluster.url.replace('postgres@', `${role}@`) },
    };
    await expect(writer(asRole)).rejects.toThrow(`ALTER ROLE "${role}" REPLICATION`);
    // An instance without a relay needs no replication connection: it writes, another instance publishes.
    const writeOnly = await writer(asRole, { relay: { mode: 'logical', enabled: false } });
    cleanups.push(() => writeOnly.close());
    await writeOnly.get(OrdersService).place('customer-1', 1, 1);
  });

  // claim: C-18
  it('refuses the mode on MariaDB: the polling relay stays', async () => {
    const db = await createTestDatabase('mariadb', 'logical_mariadb');
    cleanups.push(() => db.drop());
    const started = writer(db);
    await expect(started).rejects.toThrow(InvalidMessagingOptionsError);
    await expect(started).rejects.toThrow(/relay\.mode: 'logical' reads PostgreSQL's log.*polling relay/s);
  });

  // claim: C-97
  it('creates the slot idempotently, shows it, and refuses to drop it while it holds unread messages', async () => {
    const db = await createLogicalSchema(cluster, 'logical_cli', { createSlot: false });
    cleanups.push(() => db.drop());
    const slot = db.names.slot;
    const created = await cli(['relay', 'slot', 'create', '--schema', db.name]);
    expect(created).toMatchObject({ code: 0 });
    expect(created.out).toContain(`Created the slot '${slot}'`);
    expect((await cli(['relay', 'slot', 'create', '--slot', slot])).out).toContain('exists already');

    // A writer without a relay: its messages wait in the slot.
    const app = await writer(db, { relay: { mode: 'logical', enabled: false } });
    await app.get(OrdersService).place('customer-1', 1, 1);
    await app.get(OrdersService).place('customer-2', 2, 2);
    await app.close();

    const status = await cli(['relay', 'slot', 'status', '--slot', slot]);
    expect(status.code).toBe(0);
    expect(status.out).toMatch(/read by\s+no relay now/);
    expect(status.out).toMatch(/wal_status\s+reserved/);

    const refused = await cli(['relay', 'slot', 'drop', '--slot', slot]);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('holds 2 message(s) no relay confirmed');
    expect(
      await cluster.query('select 1 from pg_replication_slots where slot_name = $1', [slot]),
    ).toHaveLength(1);

    const forced = await cli(['relay', 'slot', 'drop', '--slot', slot, '--force']);
    expect(forced.code).toBe(0);
    expect(await cluster.query('select 1 from pg_replication_slots where slot_name = $1', [slot])).toEqual(
      [],
    );
    expect(await cluster.query('select 1 from pg_publication where pubname = $1', [slot])).toEqual([]);
  });

  // claim: C-97
  it('refuses to drop the slot while a relay reads it, --force or not, and drops it once the relay stopped', async () => {
    const db = await createLogicalSchema(cluster, 'logical_drop_read');
    cleanups.push(() => db.drop());
    const slot = db.names.slot;
    const app = await writer(db);
    cleanups.push(() => app.close());
    await waitUntil(
      'the relay reads the slot',
      async () => app.get(LogicalRelay).status().state === 'reading',
    );
    const exists = async () =>
      (await cluster.query('select 1 from pg_replication_slots where slot_name = $1', [slot])).length === 1;

    for (const force of [[], ['--force']]) {
      const refused = await cli(['relay', 'slot', 'drop', '--slot', slot, ...force]);
      expect(refused.code).toBe(1);
      expect(refused.err).toContain(`A relay reads the slot '${slot}'`);
      expect(refused.err).toContain('stop the service first');
      expect(await exists()).toBe(true);
    }

    await app.close();
    await waitUntil('the walsender is gone', async () => {
      const [row] = await cluster.query<{ active: boolean }>(
        'select active from pg_replication_slots where slot_name = $1',
        [slot],
      );
      return row?.active === false;
    });
    expect(await cli(['relay', 'slot', 'drop', '--slot', slot])).toMatchObject({ code: 0 });
    expect(await exists()).toBe(false);
  });

  it('says what is missing when the command has no database', async () => {
    let err = '';
    const code = await runMessagingCli(['relay', 'slot', 'status'], {
      env: {},
      out: () => undefined,
      err: (text) => void (err += text),
      cwd: process.cwd(),
    });
    expect(code).toBe(1);
    expect(err).toContain('MESSAGING_RELAY_DATABASE_URL');
  });
});
