import { promises as fs, mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ServiceName } from '../../tools/demo/build-services';
import { freePort } from '../../tools/infra/ports';
import { e2eBuild } from '../e2e/support/e2e-build';
import { infraEnv } from '../harness/infra';
import { createTestSchema, TestSchema } from '../harness/postgres';
import { serviceProcess } from './support/fault-stack';

/**
 * Issue 8, configuration: a service started with a bad configuration exits at once with code 1 and an error
 * that names what to fix. The rules of each variable are unit-tested (`service-environment.spec.ts`) and the
 * library's own options and schema check are integration-tested (`outbox-options.test.ts`); here, the real
 * processes, as an operator meets them. No broker is needed: none of these services gets that far.
 */
describe('Configuration errors stop a service at startup, naming what to fix', () => {
  const logDir = mkdtempSync(path.join(os.tmpdir(), 'faults-config-'));
  let schema: TestSchema;
  let deadBroker: string;

  beforeAll(async () => {
    schema = await createTestSchema('config_post');
    deadBroker = `127.0.0.1:${await freePort()}`;
  });

  afterAll(async () => {
    await schema?.drop();
    process.stdout.write(`\n[configuration] service logs: ${logDir}\n`);
  });

  /** Starts the service; resolves with the reason it exited and its log, or fails the test if it started. */
  async function failedStart(
    name: string,
    service: ServiceName,
    env: Record<string, string | undefined>,
    database: { url: string; schema?: string } = { url: schema.databaseUrl, schema: schema.name },
  ): Promise<{ exit: string; log: string }> {
    const child = await serviceProcess({
      service,
      name,
      databaseUrl: database.url,
      schema: database.schema,
      transport: 'kafka',
      kafkaBrokers: [deadBroker],
      amqpUrl: `amqp://guest:guest@${deadBroker}`,
      build: e2eBuild(),
      logDir,
      env,
      waitForConsumer: false,
    });
    const error = await child.start(60_000).then(
      () => undefined,
      (e: Error) => e,
    );
    await child.kill();
    if (!error) throw new Error(`${name} started although its configuration is bad`);
    return {
      exit: /exited while starting \((exit code \w+)\)/.exec(error.message)?.[1] ?? error.message,
      log: await fs.readFile(child.logFile, 'utf8'),
    };
  }

  // claim: C-100
  it('names every malformed variable at once, with its value, and exits with 1', async () => {
    const bad = {
      PORT: 'abc',
      DATABASE_URL: 'sqlite://127.0.0.1/posts',
      DATABASE_SCHEMA: 'Posts-Schema',
      MESSAGING_TRANSPORT: 'nats',
      KAFKA_BROKERS: 'kafka',
      KAFKA_SESSION_TIMEOUT_MS: '100',
      RELAY_LEASE_MS: 'soon',
    };
    const { exit, log } = await failedStart('post-service-bad-env', 'post-service', bad);
    expect(exit).toBe('exit code 1');
    expect(log).toContain('Invalid environment for post-service:');
    for (const [variable, value] of Object.entries(bad))
      expect(log).toContain(`  - ${variable}='${value}': `);
  });

  it('names a RabbitMQ URL of another scheme, masking its password', async () => {
    const { exit, log } = await failedStart('subscribe-service-bad-amqp', 'subscribe-service', {
      MESSAGING_TRANSPORT: 'rabbitmq',
      AMQP_URL: 'http://user:secret@rabbit:5672',
    });
    expect(exit).toBe('exit code 1');
    expect(log).toContain(`  - AMQP_URL='http://user:***@rabbit:5672': must be an amqp:// or amqps:// URL`);
    expect(log).not.toContain('secret');
  });

  it('names a database that does not exist, and how to create it', async () => {
    const url = new URL(schema.databaseUrl);
    url.pathname = '/no_such_database';
    const { exit, log } = await failedStart(
      'post-service-no-database',
      'post-service',
      {},
      { url: url.toString() },
    );
    expect(exit).toBe('exit code 1');
    expect(log).toMatch(/post-service cannot start: database "no_such_database" does not exist\. Create it/);
  });

  it('names a MariaDB database that does not exist, and how to create it', async () => {
    const url = new URL(infraEnv().mariadbUrl);
    url.pathname = '/no_such_database';
    const { exit, log } = await failedStart(
      'post-service-no-mariadb-database',
      'post-service',
      {},
      { url: url.toString().replace(/^mysql:/, 'mariadb:') },
    );
    expect(exit).toBe('exit code 1');
    expect(log).toMatch(
      /post-service cannot start: Unknown database 'no_such_database'\. Create it \(e\.g\. `mysql .*create database/,
    );
  });

  it('names DATABASE_SCHEMA when the schema it names does not exist', async () => {
    const { exit, log } = await failedStart(
      'subscribe-service-no-schema',
      'subscribe-service',
      {},
      { url: schema.databaseUrl, schema: 'no_such_schema' },
    );
    expect(exit).toBe('exit code 1');
    expect(log).toMatch(
      /subscribe-service cannot start: schema "no_such_schema" does not exist\..*DATABASE_SCHEMA/,
    );
  });

  it('names the migration to run when the database has no outbox table', async () => {
    // The service runs its migrations at startup, so a database without the outbox table is one where the
    // migration is recorded as run but the table is gone (dropped by hand, a partial restore).
    const first = await serviceProcess({
      service: 'post-service',
      name: 'post-service-migrated',
      databaseUrl: schema.databaseUrl,
      schema: schema.name,
      transport: 'kafka',
      kafkaBrokers: [deadBroker],
      amqpUrl: `amqp://guest:guest@${deadBroker}`,
      build: e2eBuild(),
      logDir,
    });
    await first.start();
    await first.stop();
    await schema.query('drop table messaging_outbox');

    const { exit, log } = await failedStart('post-service-no-outbox', 'post-service', {});
    expect(exit).toBe('exit code 1');
    expect(log).toContain(
      `post-service cannot start: MessagingSchemaMissingError: Table "${schema.name}".messaging_outbox does not exist. ` +
        'Run the migration CreateMessagingTables1764547200000',
    );
  });
});
