import { userInfo } from 'node:os';
import { resolveAdminDatabase, resolveAdminOptions } from './admin-options';
import { CliUsageError } from './cli-usage.error';

const message = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('no error thrown');
};

describe(resolveAdminOptions.name, () => {
  it('takes the RabbitMQ admin user from the admin URL', () => {
    const env = { MESSAGING_ADMIN_AMQP_URL: 'amqp://ops%40corp:p%2Fw@rabbit:5672/orders' };
    expect(resolveAdminOptions({}, env)).toEqual({
      broker: { kind: 'rabbitmq', url: env.MESSAGING_ADMIN_AMQP_URL, allowPlaintextLocal: false },
      credential: { principal: 'ops@corp', secret: 'p/w' },
    });
  });

  it('prefers the principal flag and the password variable to the URL user', () => {
    const env = { MESSAGING_ADMIN_AMQP_URL: 'amqp://a:b@rabbit/', MESSAGING_ADMIN_PASSWORD: 't' };
    expect(resolveAdminOptions({ principal: 'ops' }, env).credential).toEqual({
      principal: 'ops',
      secret: 't',
    });
  });

  it('has no credential when the secret is missing, and never reads the application variables', () => {
    const env = { MESSAGING_ADMIN_AMQP_URL: 'amqp://rabbit/', AMQP_URL: 'amqp://guest:guest@rabbit/' };
    expect(resolveAdminOptions({}, env).credential).toBeUndefined();
    expect(() => resolveAdminOptions({}, { AMQP_URL: 'amqp://guest:guest@rabbit/' })).toThrow(CliUsageError);
  });

  it("in local development, falls back to the application's broker on this machine, else local Kafka", () => {
    const local = { localPlaintext: true };
    expect(resolveAdminOptions(local, {}).broker).toMatchObject({
      kind: 'kafka',
      brokers: ['127.0.0.1:9092'],
      allowPlaintextLocal: true,
    });
    expect(resolveAdminOptions(local, { KAFKA_BROKERS: '127.0.0.1:19092' }).broker).toMatchObject({
      brokers: ['127.0.0.1:19092'],
    });
    const rabbit = resolveAdminOptions(local, { AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672' });
    expect(rabbit.broker).toMatchObject({ kind: 'rabbitmq', url: 'amqp://guest:guest@127.0.0.1:5672' });
    expect(rabbit.credential).toEqual({ principal: 'guest', secret: 'guest' });
    expect(resolveAdminOptions({ ...local, transport: 'rabbitmq' }, {}).broker).toMatchObject({
      url: 'amqp://127.0.0.1:5672',
    });
    // The admin variables still come first.
    expect(
      resolveAdminOptions(local, { MESSAGING_ADMIN_KAFKA_BROKERS: '127.0.0.1:9000', AMQP_URL: 'amqp://x/' })
        .broker,
    ).toMatchObject({ kind: 'kafka', brokers: ['127.0.0.1:9000'] });
  });

  // claim: C-70
  it('refuses --amqp-url carrying a password: secrets come from the environment only', () => {
    const flags = { amqpUrl: 'amqp://ops:S3cr3t@rabbit:5672/' };
    expect(message(() => resolveAdminOptions(flags, {}))).toMatch(/must not carry a password/);
    expect(message(() => resolveAdminOptions(flags, {}))).not.toContain('S3cr3t');
    expect(
      resolveAdminOptions({ amqpUrl: 'amqp://rabbit:5672/' }, { MESSAGING_ADMIN_PASSWORD: 'p' }),
    ).toEqual({
      broker: { kind: 'rabbitmq', url: 'amqp://rabbit:5672/', allowPlaintextLocal: false },
      credential: undefined,
    });
  });

  it('never echoes an unparsable URL', () => {
    const env = { MESSAGING_ADMIN_AMQP_URL: 'amqp://ops:S3cr3t@[rabbit' };
    const text = message(() => resolveAdminOptions({}, env));
    expect(text).toContain('MESSAGING_ADMIN_AMQP_URL');
    expect(text).not.toContain('S3cr3t');
    expect(message(() => resolveAdminOptions({ amqpUrl: 'amqp://o:S3cr3t@[x' }, {}))).not.toContain('S3cr3t');
  });

  it('reads Kafka brokers, SASL, TLS and the local-plaintext flag', () => {
    const env = {
      MESSAGING_ADMIN_KAFKA_BROKERS: 'k1:9092, k2:9092',
      MESSAGING_ADMIN_KAFKA_SASL: 'scram-sha-512',
      MESSAGING_ADMIN_KAFKA_SSL: 'true',
      MESSAGING_ADMIN_PRINCIPAL: 'redrive-admin',
      MESSAGING_ADMIN_PASSWORD: 'secret',
    };
    expect(resolveAdminOptions({}, env)).toEqual({
      broker: {
        kind: 'kafka',
        brokers: ['k1:9092', 'k2:9092'],
        sasl: 'scram-sha-512',
        ssl: true,
        allowPlaintextLocal: false,
      },
      credential: { principal: 'redrive-admin', secret: 'secret' },
    });
    expect(resolveAdminOptions({ localPlaintext: true }, env).broker).toMatchObject({
      allowPlaintextLocal: true,
    });
    expect(() => resolveAdminOptions({ kafkaSasl: 'gssapi' }, env)).toThrow(/Unknown SASL mechanism/);
  });

  it('local development needs no principal or password: the system user on Kafka, guest on RabbitMQ', () => {
    const kafka = { MESSAGING_ADMIN_KAFKA_BROKERS: '127.0.0.1:9092' };
    expect(resolveAdminOptions({ localPlaintext: true }, kafka)).toEqual({
      broker: {
        kind: 'kafka',
        brokers: ['127.0.0.1:9092'],
        sasl: undefined,
        ssl: false,
        allowPlaintextLocal: true,
      },
      credential: { principal: userInfo().username, secret: '' },
    });
    expect(
      resolveAdminOptions(
        {},
        { ...kafka, MESSAGING_ADMIN_LOCAL_PLAINTEXT: 'true', MESSAGING_ADMIN_PRINCIPAL: 'dev' },
      ).credential,
    ).toEqual({ principal: 'dev', secret: '' });
    expect(resolveAdminOptions({}, kafka).credential).toBeUndefined();
    const rabbit = { MESSAGING_ADMIN_AMQP_URL: 'amqp://127.0.0.1:5672/' };
    expect(resolveAdminOptions({ localPlaintext: true }, rabbit)).toEqual({
      broker: { kind: 'rabbitmq', url: rabbit.MESSAGING_ADMIN_AMQP_URL, allowPlaintextLocal: true },
      credential: { principal: 'guest', secret: 'guest' },
    });
  });
});

describe('--insecure-transport', () => {
  it('passes the acceptance of clear text on to the broker, from the flag or the environment (finding 12)', () => {
    const env = { MESSAGING_ADMIN_AMQP_URL: 'amqp://rabbit:5672/', MESSAGING_ADMIN_PASSWORD: 'p' };
    expect(resolveAdminOptions({ insecureTransport: true, principal: 'o' }, env).broker).toMatchObject({
      allowInsecureTransport: true,
    });
    const kafka = { MESSAGING_ADMIN_KAFKA_BROKERS: 'k:9092', MESSAGING_ADMIN_INSECURE_TRANSPORT: 'true' };
    expect(resolveAdminOptions({}, kafka).broker).toMatchObject({ allowInsecureTransport: true });
    expect(resolveAdminOptions({}, env).broker).not.toHaveProperty('allowInsecureTransport');
  });
});

describe(resolveAdminDatabase.name, () => {
  it('requires the admin database, and never shows its URL', () => {
    expect(() => resolveAdminDatabase({})).toThrow(/MESSAGING_ADMIN_DATABASE_URL/);
    const text = message(() => resolveAdminDatabase({ MESSAGING_ADMIN_DATABASE_URL: 'mysql://u:S3cr3t@h' }));
    expect(text).not.toContain('S3cr3t');
    expect(
      resolveAdminDatabase({
        MESSAGING_ADMIN_DATABASE_URL: 'postgres://ops@db/admin?sslmode=require',
        MESSAGING_ADMIN_DATABASE_SCHEMA: 'ops',
      }),
    ).toEqual({ url: 'postgres://ops@db/admin?sslmode=require', schema: 'ops' });
  });

  it('refuses a database not on this machine without TLS unless MESSAGING_ADMIN_INSECURE_TRANSPORT (finding 12)', () => {
    const url = 'postgres://ops:S3cr3t@db/admin';
    const text = message(() => resolveAdminDatabase({ MESSAGING_ADMIN_DATABASE_URL: url }));
    expect(text).toMatch(/clear text/);
    expect(text).not.toContain('S3cr3t');
    expect(
      resolveAdminDatabase({ MESSAGING_ADMIN_DATABASE_URL: url, MESSAGING_ADMIN_INSECURE_TRANSPORT: 'true' }),
    ).toEqual({ url, schema: undefined, allowInsecureTransport: true });
    expect(resolveAdminDatabase({ MESSAGING_ADMIN_DATABASE_URL: 'postgres://ops@127.0.0.1/admin' })).toEqual({
      url: 'postgres://ops@127.0.0.1/admin',
      schema: undefined,
    });
  });
});
