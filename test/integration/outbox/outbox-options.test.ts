import { DataSource } from 'typeorm';
import {
  InvalidMessagingOptionsError,
  MessagingModule,
  MessagingMigrations,
  MessagingModuleOptions,
  MessagingSchemaMissingError,
  MysqlMessagingMigrations,
  OutboxService,
  TransactionHost,
  UnsupportedDatabaseError,
} from 'nest-reliable-messaging';
import { OutboxRelay } from 'nest-reliable-messaging/testing';
import { infraEnv } from '../../harness/infra';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { createTestDatabase, TestDatabase } from '../../harness/test-database';
import { openDataSource, startMessagingModule } from '../support/messaging-module';
import { orderPlaced } from '../support/orders.fixture';
import { readOutboxRows } from '../support/outbox-rows';

/** Bad configuration stops the application at startup with an error that names what to fix. */
describe('MessagingModule options and startup checks', () => {
  let schema: TestSchema;
  let bare: TestSchema;
  let mariadb: TestDatabase;
  let mariadbBare: TestDatabase;
  let dataSource: DataSource;
  let bareDataSource: DataSource;
  let mariadbDataSource: DataSource;
  let mariadbBareDataSource: DataSource;

  const valid: MessagingModuleOptions = {
    serviceName: 'options-test',
    transport: { kind: 'kafka', brokers: infraEnv().kafkaBrokers },
    relay: { enabled: false },
  };
  /** Options the types would refuse: what a JavaScript caller or a configuration file can still pass. */
  const untyped = (options: object) => options as unknown as MessagingModuleOptions;

  beforeAll(async () => {
    schema = await createTestSchema('outbox_options');
    bare = await createTestSchema('outbox_options_bare');
    dataSource = await openDataSource(schema.name);
    bareDataSource = await openDataSource(bare.name, false);
    mariadb = await createTestDatabase('mariadb', 'outbox_options');
    mariadbBare = await createTestDatabase('mariadb', 'outbox_options_bare');
    mariadbDataSource = await openDataSource(mariadb);
    mariadbBareDataSource = await openDataSource(mariadbBare, false);
  });

  afterAll(async () => {
    for (const ds of [dataSource, bareDataSource, mariadbDataSource, mariadbBareDataSource])
      await ds?.destroy();
    for (const db of [schema, bare, mariadb, mariadbBare]) await db?.drop();
  });

  const startupError = async (start: () => Promise<unknown>): Promise<Error> => {
    const error = await start().then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(error instanceof Error))
      throw new Error('the application started although its options are invalid');
    return error;
  };

  it.each<[string, object, string, RegExp]>([
    [
      'no Kafka broker',
      { transport: { kind: 'kafka', brokers: [] } },
      'transport.brokers',
      /at least one broker/,
    ],
    [
      'a broker without a port',
      { transport: { kind: 'kafka', brokers: ['kafka'] } },
      'transport.brokers.0',
      /host:port/,
    ],
    ['relay.batchSize 0', { relay: { batchSize: 0 } }, 'relay.batchSize', /must be > 0/],
    ['relay.leaseMs 10', { relay: { leaseMs: 10 } }, 'relay.leaseMs', /≥ 1000 ms/],
    ['an unknown relay option', { relay: { foo: 1 } }, 'relay.foo', /unknown option/],
    [
      'an unknown transport',
      { transport: { kind: 'nats', url: 'nats://x' } },
      'transport.kind',
      /kind: 'kafka'/,
    ],
    [
      'a RabbitMQ URL of another scheme',
      { transport: { kind: 'rabbitmq', url: 'http://x' } },
      'transport.url',
      /amqp/,
    ],
    ['a service name with spaces', { serviceName: 'my service' }, 'serviceName', /letters, digits/],
    [
      'tenants.parkAfterMs below 100 ms',
      { tenants: { signingSecret: Buffer.alloc(32, 1).toString('base64'), parkAfterMs: 50 } },
      'tenants.parkAfterMs',
      /≥ 100/,
    ],
    [
      'a backoff ceiling below its start',
      { relay: { retryInitialDelayMs: 500, retryMaxDelayMs: 100 } },
      'relay.retryMaxDelayMs',
      /≥ retryInitialDelayMs/,
    ],
  ])('refuses %s, naming the option', async (_case, override, path, reason) => {
    const error = await startupError(() =>
      startMessagingModule(dataSource, MessagingModule.forRoot(untyped({ ...valid, ...override }))),
    );
    expect(error).toBeInstanceOf(InvalidMessagingOptionsError);
    const issue = (error as InvalidMessagingOptionsError).issues.find((i) => i.path === path);
    expect(issue).toBeDefined();
    expect(issue!.message).toMatch(reason);
    expect(error.message).toContain(`  - ${path}: `);
  });

  // claim: C-18
  it('names every bad option at once', async () => {
    const error = await startupError(() =>
      startMessagingModule(
        dataSource,
        MessagingModule.forRoot(
          untyped({ serviceName: '', transport: { kind: 'kafka', brokers: [] }, relay: { batchSize: -1 } }),
        ),
      ),
    );
    expect((error as InvalidMessagingOptionsError).issues.map((i) => i.path).sort()).toEqual([
      'relay.batchSize',
      'serviceName',
      'transport.brokers',
    ]);
  });

  it('refuses to start on a database where the migration has not run, naming the migration', async () => {
    const error = await startupError(() =>
      startMessagingModule(bareDataSource, MessagingModule.forRoot(valid)),
    );
    expect(error).toBeInstanceOf(MessagingSchemaMissingError);
    expect(error.message).toContain(MessagingMigrations[0].name); // CreateMessagingTables1764547200000
    expect(error.message).toContain(`"${bare.name}".messaging_outbox`);
    expect((error as MessagingSchemaMissingError).migration).toBe('CreateMessagingTables1764547200000');
  });

  // claim: C-11
  it('names the MySQL migration and its list on MariaDB where it has not run', async () => {
    const error = await startupError(() =>
      startMessagingModule(mariadbBareDataSource, MessagingModule.forRoot(valid)),
    );
    expect(error).toBeInstanceOf(MessagingSchemaMissingError);
    expect(error.message).toContain(MysqlMessagingMigrations[0].name); // CreateMysqlMessagingTables1764806400000
    expect(error.message).toContain('add MysqlMessagingMigrations');
  });

  it("with tenants on, names the migration of messaging_parked when the service's database lacks it", async () => {
    const noParking = await createTestSchema('outbox_options_noparked');
    const migrated = await openDataSource(noParking.name);
    try {
      await migrated.query(`drop table "${noParking.name}".messaging_parked`);
      const tenants = { signingSecret: Buffer.alloc(32, 1).toString('base64') };
      const error = await startupError(() =>
        startMessagingModule(migrated, MessagingModule.forRoot({ ...valid, tenants })),
      );
      expect(error).toBeInstanceOf(MessagingSchemaMissingError);
      expect((error as MessagingSchemaMissingError).migration).toBe('CreateParkedDeliveries1765670400000');
      expect(error.message).toContain(`"${noParking.name}".messaging_parked`);
      // Without tenants the table is not needed: the same database starts.
      const app = await startMessagingModule(migrated, MessagingModule.forRoot(valid));
      await app.close();
    } finally {
      await migrated.destroy();
      await noParking.drop();
    }
  });

  // claim: C-18
  it('refuses a database it does not support at startup, naming its type', async () => {
    // A real DataSource of a type TypeORM has (CockroachDB, over the installed pg driver), never connected.
    const cockroach = new DataSource({
      type: 'cockroachdb',
      url: infraEnv().databaseUrl,
      timeTravelQueries: false,
    });
    const error = await startupError(() => startMessagingModule(cockroach, MessagingModule.forRoot(valid)));
    expect(error).toBeInstanceOf(UnsupportedDatabaseError);
    expect((error as UnsupportedDatabaseError).databaseType).toBe('cockroachdb');
    expect(error.message).toMatch(/'cockroachdb' DataSource\. Supported: PostgreSQL .*MariaDB/);
  });

  // claim: C-18
  it('refuses relay.notify on MariaDB (no NOTIFY), saying how the relay wakes instead', async () => {
    const error = await startupError(() =>
      startMessagingModule(
        mariadbDataSource,
        MessagingModule.forRoot({ ...valid, relay: { enabled: true, notify: true } }),
      ),
    );
    expect(error).toBeInstanceOf(InvalidMessagingOptionsError);
    expect((error as InvalidMessagingOptionsError).issues).toEqual([
      { path: 'relay.notify', message: expect.stringMatching(/needs PostgreSQL .*pollIntervalMs/) as string },
    ]);
  });

  it("works with TypeORM's 'mysql' type on a MariaDB server too (no RETURNING there)", async () => {
    const mysql = new DataSource({
      type: 'mysql',
      url: mariadb.connection.url,
      migrations: MysqlMessagingMigrations,
      migrationsRun: true,
      poolSize: 2,
    });
    await mysql.initialize();
    const app = await startMessagingModule(mysql, MessagingModule.forRoot(valid));
    try {
      const event = orderPlaced(uniqueName('orders_options'));
      const messageId = await app
        .get(TransactionHost)
        .run(() => app.get(OutboxService).add(event, { orderId: 1, customer: 'bob', amount: 2 }));
      expect((await readOutboxRows(mariadb)).map((r) => r.messageId)).toEqual([messageId]);
    } finally {
      await app.close();
      await mysql.destroy();
    }
  });

  it('starts with forRootAsync and a factory, and works', async () => {
    const app = await startMessagingModule(
      dataSource,
      MessagingModule.forRootAsync({
        useFactory: async () => ({ ...valid, serviceName: 'options-async' }),
      }),
    );
    try {
      const event = orderPlaced(uniqueName('orders_options'));
      const messageId = await app
        .get(TransactionHost)
        .run(() => app.get(OutboxService).add(event, { orderId: 1, customer: 'alice', amount: 1 }));
      expect((await readOutboxRows(schema)).map((r) => r.messageId)).toEqual([messageId]);
      expect(app.get(OutboxRelay).instanceId).toMatch(/^options-async@/);
    } finally {
      await app.close();
    }
  });

  it('validates the options forRootAsync resolves, naming the option', async () => {
    const error = await startupError(() =>
      startMessagingModule(
        dataSource,
        MessagingModule.forRootAsync({ useFactory: () => untyped({ ...valid, relay: { batchSize: 0 } }) }),
      ),
    );
    expect(error).toBeInstanceOf(InvalidMessagingOptionsError);
    expect(error.message).toContain('relay.batchSize');
  });
});
