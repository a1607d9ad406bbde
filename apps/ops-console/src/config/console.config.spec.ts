import { InsecureAdminConnectionError } from 'nest-reliable-messaging/redrive';
import { hashPassword } from '../auth/password-hash';
import { loadOpsConsoleConfig } from './console.config';

/**
 * Issue 45 finding 3: the console's local mode (`MESSAGING_ADMIN_LOCAL_PLAINTEXT=true`: no identity map,
 * unencrypted approver keys) starts against brokers on this machine only, whatever the SASL setting.
 */
describe(loadOpsConsoleConfig.name, () => {
  let base: Record<string, string>;

  beforeAll(async () => {
    const passwordHash = await hashPassword('jane-secret');
    base = {
      MESSAGING_ADMIN_DATABASE_URL: 'postgres://messaging_redrive@127.0.0.1:5432/admin',
      CONSOLE_USERS: JSON.stringify([{ name: 'jane', roles: ['approver'], passwordHash }]),
      CONSOLE_DEAD_LETTER_QUEUES: 'orders.billing.dlq',
      MESSAGING_ADMIN_LOCAL_PLAINTEXT: 'true',
    };
  });
  const refusal = async (env: Record<string, string>) => {
    const error = await loadOpsConsoleConfig({ ...base, ...env }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InsecureAdminConnectionError);
    return (error as Error).message;
  };

  it('starts in local mode against brokers on this machine, with SASL or without', async () => {
    const kafka = { MESSAGING_ADMIN_KAFKA_BROKERS: '127.0.0.1:9092,[::1]:9092' };
    await expect(loadOpsConsoleConfig({ ...base, ...kafka })).resolves.toMatchObject({
      broker: { kind: 'kafka', allowPlaintextLocal: true },
    });
    const sasl = { ...kafka, MESSAGING_ADMIN_KAFKA_SASL: 'scram-sha-512', MESSAGING_ADMIN_PASSWORD: 'x' };
    await expect(loadOpsConsoleConfig({ ...base, ...sasl })).resolves.toBeDefined();
    const rabbit = { MESSAGING_ADMIN_AMQP_URL: 'amqp://guest:guest@localhost:5672' };
    await expect(loadOpsConsoleConfig({ ...base, ...rabbit })).resolves.toBeDefined();
  });

  it('refuses local mode on Kafka with SASL against a broker that is not on this machine', async () => {
    const message = await refusal({
      MESSAGING_ADMIN_KAFKA_BROKERS: 'kafka.prod.example:9093',
      MESSAGING_ADMIN_KAFKA_SASL: 'scram-sha-512',
      MESSAGING_ADMIN_KAFKA_SSL: 'true',
      MESSAGING_ADMIN_PRINCIPAL: 'ops-console',
      MESSAGING_ADMIN_PASSWORD: 'secret',
    });
    expect(message).toContain('kafka.prod.example:9093');
    expect(message).not.toContain('secret');
  });

  it('refuses local mode on a RabbitMQ URL that is not on this machine, in words about RabbitMQ', async () => {
    const message = await refusal({ MESSAGING_ADMIN_AMQP_URL: 'amqps://rabbit.prod.example/orders' });
    expect(message).toMatch(/^Refused to connect to RabbitMQ as the admin/);
    expect(message).not.toMatch(/Kafka|SASL/);
  });

  it('refuses the old variable MESSAGING_ADMIN_KAFKA_LOCAL_PLAINTEXT the same way', async () => {
    await refusal({
      MESSAGING_ADMIN_LOCAL_PLAINTEXT: '',
      MESSAGING_ADMIN_KAFKA_LOCAL_PLAINTEXT: 'true',
      MESSAGING_ADMIN_KAFKA_BROKERS: '10.0.0.7:9092',
      MESSAGING_ADMIN_KAFKA_SASL: 'scram-sha-256',
    });
  });

  // Issue 45 item 8: the console's redrives keep the deployment's extra headers as the CLI's do.
  it('reads MESSAGING_ADMIN_CARRY_HEADERS as the CLI does, for the redrive it builds', async () => {
    const rabbit = { MESSAGING_ADMIN_AMQP_URL: 'amqp://guest:guest@localhost:5672' };
    await expect(
      loadOpsConsoleConfig({ ...base, ...rabbit, MESSAGING_ADMIN_CARRY_HEADERS: ' x-tenant, traceparent ,' }),
    ).resolves.toMatchObject({ carryHeaders: ['x-tenant', 'traceparent'] });
    await expect(loadOpsConsoleConfig({ ...base, ...rabbit })).resolves.toMatchObject({ carryHeaders: [] });
  });

  // Issue 45 item 7: a read of dead letters holds at most this many MiB, as for the CLI.
  it('reads MESSAGING_ADMIN_READ_BUDGET_MIB as a byte budget, and refuses what is not 1 to 1024 MiB', async () => {
    const rabbit = { MESSAGING_ADMIN_AMQP_URL: 'amqp://guest:guest@localhost:5672' };
    await expect(
      loadOpsConsoleConfig({ ...base, ...rabbit, MESSAGING_ADMIN_READ_BUDGET_MIB: '4' }),
    ).resolves.toMatchObject({ readBudgetBytes: 4 * 1024 * 1024 });
    await expect(loadOpsConsoleConfig({ ...base, ...rabbit })).resolves.toMatchObject({
      readBudgetBytes: undefined,
    });
    for (const bad of ['0', '2000', '1.5', 'lots']) {
      await expect(
        loadOpsConsoleConfig({ ...base, ...rabbit, MESSAGING_ADMIN_READ_BUDGET_MIB: bad }),
      ).rejects.toThrow(/MESSAGING_ADMIN_READ_BUDGET_MIB is a whole number of MiB from 1 to 1024/);
    }
  });

  it('refuses a broker or an admin database not on this machine in clear text, unless asked for (finding 12)', async () => {
    const prod = { MESSAGING_ADMIN_LOCAL_PLAINTEXT: 'false', MESSAGING_ADMIN_PASSWORD: 'S3cr3t' };
    const amqp = { ...prod, MESSAGING_ADMIN_AMQP_URL: 'amqp://ops_admin@rabbit.prod.example/orders' };
    expect(await refusal(amqp)).toMatch(/RabbitMQ .*clear text/);
    const kafka = {
      ...prod,
      MESSAGING_ADMIN_KAFKA_BROKERS: 'kafka.prod.example:9093',
      MESSAGING_ADMIN_KAFKA_SASL: 'scram-sha-512',
      MESSAGING_ADMIN_PRINCIPAL: 'ops_admin',
    };
    expect(await refusal(kafka)).toMatch(/Kafka .*without TLS/);
    const db = {
      ...prod,
      MESSAGING_ADMIN_AMQP_URL: 'amqps://ops_admin@rabbit.prod.example/orders',
      MESSAGING_ADMIN_DATABASE_URL: 'postgres://messaging_redrive:S3cr3t@db.prod.example/admin',
    };
    const text = await refusal(db);
    expect(text).toMatch(/admin database .*clear text/);
    expect(text).not.toContain('S3cr3t');
    const accepted = { MESSAGING_ADMIN_INSECURE_TRANSPORT: 'true' };
    await expect(loadOpsConsoleConfig({ ...base, ...amqp, ...accepted })).resolves.toMatchObject({
      broker: { kind: 'rabbitmq', allowInsecureTransport: true },
    });
    await expect(loadOpsConsoleConfig({ ...base, ...db, ...accepted })).resolves.toMatchObject({
      database: { allowInsecureTransport: true },
    });
  });

  // Issue 45 finding 14: on a network address without secureCookies the cookies are not `__Host-`, so a
  // sibling subdomain could toss a cookie and swap sessions; nothing refused it.
  describe('HOST', () => {
    const kafka = { MESSAGING_ADMIN_KAFKA_BROKERS: '127.0.0.1:9092' };

    it('refuses a HOST that is not a loopback address without CONSOLE_SECURE_COOKIES=true, naming it', async () => {
      for (const host of ['0.0.0.0', '::', '10.0.0.5', 'console.example']) {
        const env = { ...base, ...kafka, HOST: host, CONSOLE_TRUST_PROXY: '1' };
        const error = await loadOpsConsoleConfig(env).then(
          () => undefined,
          (e: unknown) => e as Error,
        );
        expect(error?.message).toContain(`HOST=${host}`);
        expect(error?.message).toContain('CONSOLE_SECURE_COOKIES=true');
        expect(error?.message).toContain('secureCookies');
      }
    });

    it('starts on a loopback HOST (or none) without it, and on any HOST with it', async () => {
      for (const host of [undefined, '127.0.0.1', '::1', 'localhost']) {
        const env = { ...base, ...kafka, ...(host ? { HOST: host } : {}) };
        await expect(loadOpsConsoleConfig(env)).resolves.toMatchObject({ secureCookies: false });
      }
      const secure = { ...base, ...kafka, HOST: '0.0.0.0', CONSOLE_SECURE_COOKIES: 'true' };
      await expect(loadOpsConsoleConfig(secure)).resolves.toMatchObject({
        host: '0.0.0.0',
        secureCookies: true,
      });
    });
  });
});
