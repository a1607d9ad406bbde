import { TestingModule } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import {
  InvalidTenantError,
  MessageHeaders,
  MessagingHealthIndicator,
  MessagingMetrics,
  MessagingTenants,
  OutboxService,
  ReplicationSlotMissingError,
  UnknownTenantError,
} from 'nest-reliable-messaging';
import {
  CliIo,
  getMessagingTransportToken,
  MessageTransport,
  runMessagingCli,
  tenantLogicalNames,
} from 'nest-reliable-messaging/testing';
import { eventually } from '../../harness/eventually';
import { FaultProxy } from '../../harness/fault-proxy';
import { createTestSchema } from '../../harness/postgres';
import { PostgresCluster } from '../../harness/postgres-cluster';
import { createTestDatabase, TestDatabase } from '../../harness/test-database';
import { startLogicalCluster } from '../support/logical-cluster';
import {
  Applied,
  createTenantsApp,
  Notes,
  noteWritten,
  NoteWritten,
  TENANT_BROKERS,
  tenantDataSource,
  TenantsBroker,
} from './tenants.fixture';

/** Alpha's backlog in the fairness case: far more than one batch of its relay. */
const BACKLOG = 3_000;

interface Tenant {
  readonly name: string;
  /** The tenant's database on the cluster (`alpha`'s own; `beta` and `gamma` share one). */
  readonly databaseName: string;
  readonly database: TestDatabase;
  readonly dataSource: DataSource;
}

/**
 * Issue 43, tenants with `relay.mode: 'logical'`: each tenant's writes go to its database's log, and a logical
 * relay of its own reads them from the slot named after it (`messaging_tenant_<name>`, made with `nest-messaging
 * relay slot create --tenant`). On a private cluster with `wal_level = logical`: `alpha` in a database of its
 * own, `beta` and `gamma` in schemas of one shared database (`gamma` through a proxy that cuts it off). The
 * service's own database is on the shared server (replica WAL, no slot): the library needs no slot there.
 */
describe.each(TENANT_BROKERS)('Tenants with the logical relay (%s)', (_label, kind) => {
  const broker = new TenantsBroker(kind);
  const cleanups: Array<() => Promise<unknown>> = [];
  let cluster: PostgresCluster;
  let proxy: FaultProxy;
  let app: TestingModule;
  let notes: Notes;
  let tenants: MessagingTenants;
  let alpha: Tenant;
  let beta: Tenant;
  let gamma: Tenant;
  let event: NoteWritten;
  let homeDatabase: TestDatabase;

  async function newTenant(name: string, databaseName: string, viaProxy = false): Promise<Tenant> {
    const database = await createTestSchema(`tl_${name}`, cluster.databaseUrl(databaseName));
    cleanups.push(() => database.drop());
    let override: { url: string } | undefined;
    if (viaProxy) {
      const url = new URL(cluster.databaseUrl(databaseName));
      url.host = proxy.address;
      override = { url: url.toString() };
    }
    const dataSource = await tenantDataSource(database, override);
    cleanups.push(() => dataSource.destroy());
    return { name, databaseName, database, dataSource };
  }

  /** `nest-messaging relay slot …` on the tenant's database. */
  async function cli(tenant: Tenant, args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const io: CliIo = {
      env: { MESSAGING_RELAY_DATABASE_URL: cluster.databaseUrl(tenant.databaseName) },
      out: (text) => void (out += text),
      err: (text) => void (err += text),
      cwd: process.cwd(),
    };
    return { code: await runMessagingCli(args, io), out, err };
  }

  const write = (tenant: string, text: string): Promise<string> =>
    tenants.run(tenant, () => notes.write(text));
  const applied = (tenant: Tenant): Promise<Applied[]> => tenant.dataSource.getRepository(Applied).find();

  beforeAll(async () => {
    cluster = await startLogicalCluster('tenants-logical');
    cleanups.push(() => cluster.destroy());
    proxy = await FaultProxy.start({ target: { host: '127.0.0.1', port: cluster.port } });
    cleanups.push(() => proxy.close());
    await cluster.createDatabase('tenant_alpha');
    await cluster.createDatabase('tenant_shared');
    alpha = await newTenant('alpha', 'tenant_alpha');
    beta = await newTenant('beta', 'tenant_shared');
    gamma = await newTenant('gamma', 'tenant_shared', true);
    const home = await createTestDatabase('postgres', 'tl_home');
    cleanups.push(() => home.drop());
    homeDatabase = home;
    const { destination, group } = broker.destination('tenant_logical_notes');
    event = noteWritten(destination);
    ({ moduleRef: app, notes } = await createTenantsApp({
      home,
      transport: broker.transport(),
      event,
      group,
      relayMode: 'logical',
    }));
    cleanups.push(() => app.close());
    tenants = app.get(MessagingTenants);
  }, 180_000);

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await broker.cleanup();
  }, 60_000);

  it('refuses a tenant without its slot, naming it; takes it once `relay slot create --tenant` made it', async () => {
    const slot = tenantLogicalNames('alpha').slot;
    expect(slot).toBe('messaging_tenant_alpha');
    const refused = tenants.add('alpha', alpha.dataSource);
    await expect(refused).rejects.toBeInstanceOf(ReplicationSlotMissingError);
    await expect(refused).rejects.toThrow(`nest-messaging relay slot create --slot ${slot}`);
    expect(tenants.names()).toEqual([]);

    for (const tenant of [alpha, beta, gamma]) {
      const created = await cli(tenant, ['relay', 'slot', 'create', '--tenant', tenant.name]);
      expect(created).toMatchObject({ code: 0 });
      expect(created.out).toContain(`Created the slot 'messaging_tenant_${tenant.name}'`);
    }
    // Slot names are the server's: two tenants of one database, and one of another, each have their own.
    const slots = await cluster.query<{ slot_name: string; database: string }>(
      "select slot_name, database from pg_replication_slots where slot_name like 'messaging_tenant_%' order by 1",
    );
    expect(slots).toEqual([
      { slot_name: 'messaging_tenant_alpha', database: 'tenant_alpha' },
      { slot_name: 'messaging_tenant_beta', database: 'tenant_shared' },
      { slot_name: 'messaging_tenant_gamma', database: 'tenant_shared' },
    ]);
    const bad = await cli(alpha, ['relay', 'slot', 'create', '--tenant', 'alpha', '--slot', 'x']);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain('Give --tenant alone');

    for (const tenant of [alpha, beta, gamma]) await tenants.add(tenant.name, tenant.dataSource);
    expect(tenants.names()).toEqual(['alpha', 'beta', 'gamma']);
  }, 60_000);

  it('refuses a MariaDB tenant: the logical relay reads PostgreSQL', async () => {
    const mariadb = await createTestDatabase('mariadb', 'tl_maria');
    cleanups.push(() => mariadb.drop());
    const dataSource = await tenantDataSource(mariadb);
    cleanups.push(() => dataSource.destroy());
    const refused = tenants.add('maria', dataSource);
    await expect(refused).rejects.toBeInstanceOf(InvalidTenantError);
    await expect(refused).rejects.toThrow(/relay\.mode 'logical' reads PostgreSQL's log.*'mariadb'/);
    expect(tenants.names()).not.toContain('maria');
  });

  it("relays each tenant's writes from its own slot, and applies each in its tenant's database only", async () => {
    for (const tenant of [alpha, beta, gamma]) {
      for (let i = 0; i < 3; i++) await write(tenant.name, `${tenant.name}-${i}`);
    }
    await write('beta', 'chain-b');
    await eventually(async () => {
      expect(await applied(alpha)).toHaveLength(3);
      expect(await applied(beta)).toHaveLength(5); // 3, the chain and its follow-up
      expect(await applied(gamma)).toHaveLength(3);
    }, 60_000);
    for (const tenant of [alpha, beta, gamma]) {
      const rows = await applied(tenant);
      expect(rows.every((row) => row.tenant === tenant.name)).toBe(true);
      expect(rows.every((row) => row.text.startsWith(`${tenant.name}-`) || row.text.endsWith('-b'))).toBe(
        true,
      );
      // The log carried them: no outbox row was written (none parked either).
      const [{ n }] = await tenant.database.query<{ n: string }>(
        'select count(*) as n from messaging_outbox',
      );
      expect(Number(n)).toBe(0);
    }
    expect((await applied(beta)).map((row) => row.text)).toEqual(expect.arrayContaining(['chained-b']));
    const metrics = await app.get(MessagingMetrics).metrics();
    expect(metrics).toMatch(/messaging_tenant_published_total\{tenant="alpha"\} 3/);
    expect(metrics).toMatch(/messaging_tenant_published_total\{tenant="beta"\} 5/);
    const health = app.get(MessagingHealthIndicator);
    expect((await health.relay()).relay).toMatchObject({ status: 'up', mode: 'logical' });
    expect((await health.tenants()).tenants.status).toBe('up');
  }, 90_000);

  it("hands a one-message tenant's write to the broker while another tenant's backlog of 3,000 drains", async () => {
    // What each tenant's relay hands the service's transport, in order: submitted (the call) and confirmed.
    const transport = app.get<MessageTransport>(getMessagingTransportToken());
    const submitted: string[] = [];
    const confirmed: string[] = [];
    const publish = transport.publish.bind(transport);
    const spy = jest.spyOn(transport, 'publish').mockImplementation(async (messages, options) => {
      const tenantsOf = messages.map((message) => message.headers[MessageHeaders.TENANT] ?? '');
      submitted.push(...tenantsOf);
      const outcomes = await publish(messages, options);
      confirmed.push(...tenantsOf);
      return outcomes;
    });
    try {
      const outbox = app.get(OutboxService);
      // Alpha's backlog in one commit, then one message of beta's: alpha's relay starts on it at once.
      await tenants.run('alpha', () =>
        tenants.transactionHost().run(async () => {
          for (let i = 0; i < BACKLOG; i++)
            await outbox.add(event, { text: `alpha-big-${i}`, tenant: 'alpha' });
        }),
      );
      await tenants.run('beta', () =>
        tenants.transactionHost().run(() => outbox.add(event, { text: 'beta-small', tenant: 'beta' })),
      );
      await eventually(() => expect(confirmed.filter((t) => t === 'alpha')).toHaveLength(BACKLOG), 120_000);
      await eventually(() => expect(confirmed).toContain('beta'), 30_000);
    } finally {
      spy.mockRestore();
    }
    const alphaBefore = (log: string[]) =>
      log.slice(0, log.indexOf('beta')).filter((t) => t === 'alpha').length;
    console.log(
      `[fairness, logical, ${kind}] beta's message handed over after ${alphaBefore(submitted)} and confirmed ` +
        `after ${alphaBefore(confirmed)} of alpha's ${BACKLOG}`,
    );
    // Beta's relay reads its own slot: its message does not wait for alpha's backlog to be handed over.
    expect(alphaBefore(submitted)).toBeLessThan(BACKLOG);
  }, 180_000);

  it("keeps a removed tenant's slot: what another instance wrote meanwhile goes out once it is added again", async () => {
    const removal = await tenants.remove('beta');
    expect(removal).toMatchObject({ tenant: 'beta', pendingMessages: 0 });
    await expect(write('beta', 'beta-removed')).rejects.toThrow(UnknownTenantError);
    // Another instance of the service, one that only writes, still serves beta: its writes go to beta's slot.
    const writerOnly = await createTenantsApp({
      home: homeDatabase,
      transport: broker.transport(),
      event,
      relayMode: 'logical',
      relayEnabled: false,
    });
    try {
      const writerTenants = writerOnly.moduleRef.get(MessagingTenants);
      const betaAgain = await tenantDataSource(beta.database);
      cleanups.push(() => betaAgain.destroy());
      await writerTenants.add('beta', betaAgain);
      await writerTenants.run('beta', () => writerOnly.notes.write('beta-while-removed'));
    } finally {
      await writerOnly.moduleRef.close();
    }
    // Nothing reads beta's slot now: the message waits there.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await applied(beta)).map((row) => row.text)).not.toContain('beta-while-removed');

    await tenants.add('beta', beta.dataSource);
    await eventually(async () => {
      expect((await applied(beta)).map((row) => row.text)).toContain('beta-while-removed');
    }, 60_000);
  }, 120_000);

  it("keeps the others flowing while one tenant's database is cut off, and relays its slot after", async () => {
    const health = app.get(MessagingHealthIndicator);
    // Committed a moment before the cut: in gamma's slot whether or not its relay read it before.
    await write('gamma', 'gamma-before');
    await proxy.refuse();
    proxy.cutAll();
    try {
      await eventually(async () => {
        const result = (await health.tenants()).tenants as { status: string; down?: string[] };
        expect(result).toMatchObject({ status: 'down', down: ['gamma'] });
        // Its relay cannot reach the slot either, and says so (a fixed phrase; the details are in the log).
        const gammaStatus = (await tenants.status()).find((status) => status.tenant === 'gamma');
        expect(gammaStatus).toMatchObject({
          up: false,
          relayProblem: 'cannot connect to PostgreSQL for replication',
        });
      }, 30_000);
      await expect(write('gamma', 'gamma-during')).rejects.toThrow();
      await write('alpha', 'alpha-during');
      await write('beta', 'beta-during');
      await eventually(async () => {
        expect((await applied(alpha)).map((row) => row.text)).toContain('alpha-during');
        expect((await applied(beta)).map((row) => row.text)).toContain('beta-during');
      }, 30_000);
    } finally {
      await proxy.heal();
    }
    await eventually(() => write('gamma', 'gamma-after'), 30_000);
    await eventually(async () => {
      expect((await applied(gamma)).map((row) => row.text)).toEqual(
        expect.arrayContaining(['gamma-before', 'gamma-after']),
      );
      expect((await health.tenants()).tenants.status).toBe('up');
    }, 60_000);
    expect((await applied(gamma)).map((row) => row.text)).not.toContain('gamma-during');
  }, 150_000);
});
