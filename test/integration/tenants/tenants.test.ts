import { TestingModule } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import {
  InvalidTenantError,
  MessageHeaders,
  MessagingHealthIndicator,
  MessagingMetrics,
  MessagingTenants,
  newMessageId,
  NoActiveTransactionError,
  OutboxService,
  TenantRequiredError,
  UnknownTenantError,
} from 'nest-reliable-messaging';
import {
  encodeEnvelope,
  getMessagingTransportToken,
  MessageTransport,
  stampTenant,
  tenantSigningKey,
  WireMessage,
} from 'nest-reliable-messaging/testing';
import { eventually } from '../../harness/eventually';
import { FaultProxy } from '../../harness/fault-proxy';
import { infraEnv } from '../../harness/infra';
import { createTestDatabase, TestDatabase } from '../../harness/test-database';
import {
  Applied,
  closeTenantsSuite,
  createTenantsApp,
  Note,
  Notes,
  noteWritten,
  NoteWritten,
  TENANT_BROKERS,
  TENANT_SECRET,
  tenantDataSource,
  TenantsBroker,
} from './tenants.fixture';

interface Tenant {
  readonly name: string;
  readonly database: TestDatabase;
  readonly dataSource: DataSource;
}

/**
 * Issue 43, tenants: three tenant databases (two PostgreSQL schemas on the shared server, one through a proxy
 * that stops it; one MariaDB database) and a service's own schema. Each write lands in its tenant's database,
 * each message is applied in its tenant's database and no other; bad input is refused in the caller; a
 * forged tenant is dead-lettered, an unknown one held until it is added; a tenant whose database is down
 * does not stop the others; a removed tenant keeps its messages.
 */
describe.each(TENANT_BROKERS)('Tenants (%s)', (_label, kind) => {
  const broker = new TenantsBroker(kind);
  const databases: TestDatabase[] = [];
  const dataSources: DataSource[] = [];
  let proxy: FaultProxy;
  let home: TestDatabase;
  let app: TestingModule;
  let notes: Notes;
  let tenants: MessagingTenants;
  let event: NoteWritten;
  let destination: string;
  let group: string;
  let acme: Tenant;
  let globex: Tenant;
  let initech: Tenant;

  async function newTenant(name: string, dialect: 'postgres' | 'mariadb', viaProxy = false): Promise<Tenant> {
    const database = await createTestDatabase(dialect, `tn_${name}`);
    databases.push(database);
    let override: { url: string } | undefined;
    if (viaProxy) {
      const url = new URL(infraEnv().databaseUrl);
      url.host = proxy.address;
      override = { url: url.toString() };
    }
    const dataSource = await tenantDataSource(database, override);
    dataSources.push(dataSource);
    return { name, database, dataSource };
  }

  async function write(tenant: string, text: string): Promise<string> {
    return tenants.run(tenant, () => notes.write(text));
  }

  async function applied(tenant: Tenant): Promise<Applied[]> {
    return tenant.dataSource.getRepository(Applied).find();
  }

  async function outboxRows(database: TestDatabase): Promise<number> {
    const [row] = await database.query<{ n: number | string }>('select count(*) as n from messaging_outbox');
    return Number(row.n);
  }

  beforeAll(async () => {
    const db = new URL(infraEnv().databaseUrl);
    proxy = await FaultProxy.start({ target: { host: db.hostname, port: Number(db.port || 5432) } });
    home = await createTestDatabase('postgres', 'tn_home');
    databases.push(home);
    acme = await newTenant('acme', 'postgres');
    globex = await newTenant('globex', 'mariadb');
    initech = await newTenant('initech', 'postgres', true);
    ({ destination, group } = broker.destination('tenant_notes'));
    event = noteWritten(destination);
    ({ moduleRef: app, notes } = await createTenantsApp({
      home,
      transport: broker.transport(),
      event,
      group,
      versionHoldWindowMs: 120_000,
    }));
    tenants = app.get(MessagingTenants);
    for (const tenant of [acme, globex, initech]) await tenants.add(tenant.name, tenant.dataSource);
  }, 120_000);

  afterAll(async () => {
    await closeTenantsSuite({ app, proxy, dataSources, databases, broker });
  }, 60_000);

  it('writes each message to its tenant database and applies it there, in no other', async () => {
    for (const tenant of [acme, globex, initech]) {
      for (let i = 0; i < 3; i++) await write(tenant.name, `${tenant.name}-${i}`);
    }
    await eventually(async () => {
      for (const tenant of [acme, globex, initech]) expect(await applied(tenant)).toHaveLength(3);
    }, 60_000);
    for (const tenant of [acme, globex, initech]) {
      const rows = await applied(tenant);
      expect(rows.every((row) => row.tenant === tenant.name && row.text.startsWith(`${tenant.name}-`))).toBe(
        true,
      );
      const written = await tenant.dataSource.getRepository(Note).find();
      expect(written.map((note) => note.text).sort()).toEqual([0, 1, 2].map((i) => `${tenant.name}-${i}`));
    }
    expect(await outboxRows(home)).toBe(0); // nothing in the service's own database
    const metrics = await app.get(MessagingMetrics).metrics();
    expect(metrics).toMatch(/messaging_tenant_published_total\{tenant="acme"\} 3/);
    expect(metrics).toMatch(/messaging_tenant_database_up\{tenant="globex"\} 1/);
  }, 90_000);

  it("records a handler's own message in the outbox of the tenant it applies, in its transaction", async () => {
    await write('globex', 'chain-g');
    await eventually(async () => {
      expect((await applied(globex)).map((row) => row.text)).toEqual(
        expect.arrayContaining(['chain-g', 'chained-g']),
      );
    }, 60_000);
    for (const tenant of [acme, initech]) {
      expect((await applied(tenant)).filter((row) => row.text.endsWith('-g'))).toEqual([]);
    }
    expect(
      (await applied(globex)).filter((row) => row.text === 'chained-g').map((row) => row.tenant),
    ).toEqual(['globex']);
  }, 90_000);

  it('refuses a write with no tenant, an unregistered tenant or no transaction, writing nothing', async () => {
    const before = await Promise.all([home, acme.database, globex.database].map(outboxRows));
    await expect(notes.write('nobody')).rejects.toBeInstanceOf(TenantRequiredError);
    await expect(write('hooli', 'hooli-0')).rejects.toBeInstanceOf(UnknownTenantError);
    await expect(tenants.run('acme', () => notes.addOnly('acme-x'))).rejects.toBeInstanceOf(
      NoActiveTransactionError,
    );
    await expect(tenants.add('acme', acme.dataSource)).rejects.toBeInstanceOf(InvalidTenantError);
    await expect(tenants.add('acme2', acme.dataSource)).rejects.toBeInstanceOf(InvalidTenantError);
    await expect(tenants.add('bad name!', acme.dataSource)).rejects.toBeInstanceOf(InvalidTenantError);
    expect(await Promise.all([home, acme.database, globex.database].map(outboxRows))).toEqual(before);
    expect(await acme.dataSource.getRepository(Note).countBy({ text: 'acme-x' })).toBe(0);
  });

  it('dead-letters a forged tenant (no signature, a wrong key, another message’s signature) and applies none', async () => {
    const transport = app.get<MessageTransport>(getMessagingTransportToken());
    const wrongKey = tenantSigningKey(Buffer.alloc(32, 9).toString('base64'))!;
    const rightKey = tenantSigningKey(TENANT_SECRET)!;
    const signedForGlobex = stampTenant(rightKey, 'globex', note('forged-replay'));
    const forged: WireMessage[] = [
      // A header alone, no signature.
      withHeader(note('forged-unsigned'), { [MessageHeaders.TENANT]: 'acme' }),
      // Signed with a key that is not the service's.
      stampTenant(wrongKey, 'acme', note('forged-wrong-key')),
      // A genuine signature for globex, the tenant header rewritten to acme.
      withHeader(signedForGlobex, { [MessageHeaders.TENANT]: 'acme' }),
      // The same signature over another body.
      {
        ...stampTenant(rightKey, 'acme', note('forged-body')),
        body: Buffer.from('{"text":"x","tenant":"acme"}'),
      },
      // No tenant at all.
      note('forged-none'),
    ];
    const outcomes = await transport.publish(forged);
    expect(outcomes.every((outcome) => outcome.status === 'CONFIRMED')).toBe(true);
    // A genuine one after them: once it is applied, the forged ones were settled before it (or beside it).
    await write('acme', 'acme-after-forgery');
    await eventually(async () => {
      expect((await applied(acme)).map((row) => row.text)).toContain('acme-after-forgery');
      const metrics = await app.get(MessagingMetrics).metrics();
      expect(refused(metrics, 'forged')).toBeGreaterThanOrEqual(4);
      expect(refused(metrics, 'missing')).toBeGreaterThanOrEqual(1);
    }, 60_000);
    for (const tenant of [acme, globex, initech]) {
      expect((await applied(tenant)).filter((row) => row.text.startsWith('forged'))).toEqual([]);
    }
  }, 90_000);

  it('holds a message of a tenant not registered, and applies it in that tenant once it is added', async () => {
    const transport = app.get<MessageTransport>(getMessagingTransportToken());
    const key = tenantSigningKey(TENANT_SECRET)!;
    const [outcome] = await transport.publish([stampTenant(key, 'hooli', note('hooli-early'))]);
    expect(outcome.status).toBe('CONFIRMED');
    await eventually(async () => {
      const metrics = await app.get(MessagingMetrics).metrics();
      expect(refused(metrics, 'unknown')).toBeGreaterThanOrEqual(1);
      const health = app.get(MessagingHealthIndicator).heldMessages();
      expect(health.heldMessages.held).toBeGreaterThanOrEqual(1);
    }, 30_000);
    for (const tenant of [acme, globex, initech]) {
      expect((await applied(tenant)).filter((row) => row.text === 'hooli-early')).toEqual([]);
    }
    // A customer signs up: the tenant is added at runtime, and its held message is applied in its database.
    const added = await newTenant('hooli', 'postgres');
    await tenants.add('hooli', added.dataSource);
    await eventually(async () => {
      expect((await applied(added)).map((row) => [row.text, row.tenant])).toEqual([['hooli-early', 'hooli']]);
    }, 60_000);
    await write('hooli', 'hooli-1');
    await eventually(async () => expect(await applied(added)).toHaveLength(2), 30_000);
  }, 120_000);

  it('keeps the other tenants flowing while one tenant database is down, and catches up after', async () => {
    await proxy.refuse();
    proxy.cutAll();
    const health = app.get(MessagingHealthIndicator);
    await eventually(async () => {
      const result = await health.tenants();
      expect(result.tenants.status).toBe('down');
      expect(result.tenants.down).toEqual(['initech']);
    }, 30_000);
    await expect(write('initech', 'initech-down')).rejects.toThrow();
    const started = Date.now();
    const before = { acme: (await applied(acme)).length, globex: (await applied(globex)).length };
    for (let i = 0; i < 5; i++) {
      await write('acme', `acme-outage-${i}`);
      await write('globex', `globex-outage-${i}`);
    }
    await eventually(async () => {
      expect(await applied(acme)).toHaveLength(before.acme + 5);
      expect(await applied(globex)).toHaveLength(before.globex + 5);
    }, 30_000);
    // The two others went on at their pace (well under the relay's backoff of the down tenant, and its 2 s turn).
    expect(Date.now() - started).toBeLessThan(15_000);
    await proxy.heal();
    const id = await eventually(() => write('initech', 'initech-back'), 30_000);
    expect(id).toBeDefined();
    await eventually(async () => {
      expect((await applied(initech)).map((row) => row.text)).toContain('initech-back');
      expect((await health.tenants()).tenants.status).toBe('up');
    }, 60_000);
  }, 150_000);

  it('removes a tenant: says what it keeps, refuses its writes, and goes on when it is added again', async () => {
    const host = () => tenants.transactionHost();
    // Two messages scheduled a minute ahead: in the tenant's database, not yet published.
    const service = app.get(OutboxService);
    await tenants.run('globex', () =>
      host().run(async () => {
        await service.add(event, { text: 'globex-later-1', tenant: 'globex' }, { delayMs: 60_000 });
        await service.add(event, { text: 'globex-later-2', tenant: 'globex' }, { delayMs: 60_000 });
      }),
    );
    const removal = await tenants.remove('globex');
    expect(removal).toEqual({ tenant: 'globex', pendingMessages: 0, scheduledMessages: 2 });
    expect(tenants.names()).not.toContain('globex');
    await expect(write('globex', 'globex-removed')).rejects.toBeInstanceOf(UnknownTenantError);
    const [scheduled] = await globex.database.query<{ n: number | string }>(
      'select count(*) as n from messaging_outbox_scheduled',
    );
    expect(Number(scheduled.n)).toBe(2);
    await tenants.add('globex', globex.dataSource);
    await write('globex', 'globex-again');
    await eventually(
      async () => expect((await applied(globex)).map((row) => row.text)).toContain('globex-again'),
      30_000,
    );
  }, 90_000);

  function note(text: string): WireMessage {
    return encodeEnvelope(
      {
        messageId: newMessageId(),
        type: 'NoteWritten',
        destination,
        key: text,
        occurredAt: new Date(),
        headers: {},
      },
      JSON.stringify({ text, tenant: 'acme' }),
    );
  }
});

function withHeader(message: WireMessage, headers: Record<string, string>): WireMessage {
  return { ...message, headers: { ...message.headers, ...headers } };
}

function refused(metrics: string, reason: string): number {
  let total = 0;
  for (const line of metrics.split('\n')) {
    if (line.startsWith('messaging_tenant_refused_total{') && line.includes(`reason="${reason}"`)) {
      total += Number(line.split(' ').pop());
    }
  }
  return total;
}
