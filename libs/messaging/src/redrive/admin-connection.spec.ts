import { checkAdminConnection, checkAdminDatabaseUrl, KafkaRedriveBroker } from './admin-connection';
import { InsecureAdminConnectionError } from './errors/insecure-admin-connection.error';

/**
 * Issue 45 finding 3: local development (`--local-plaintext`) turns off the identity map, so it must never
 * reach a broker that is not on this machine, whatever the SASL setting.
 */
describe(checkAdminConnection.name, () => {
  const kafka = (given: Partial<KafkaRedriveBroker>): KafkaRedriveBroker => ({
    kind: 'kafka',
    brokers: ['127.0.0.1:9092'],
    ...given,
  });
  const refusal = (run: () => void): InsecureAdminConnectionError => {
    try {
      run();
    } catch (error) {
      if (error instanceof InsecureAdminConnectionError) return error;
      throw error;
    }
    throw new Error('not refused');
  };

  it('refuses local mode on Kafka with SASL against a broker that is not on this machine', () => {
    for (const sasl of ['scram-sha-512', 'scram-sha-256', 'plain'] as const) {
      const error = refusal(() =>
        checkAdminConnection(
          kafka({ allowPlaintextLocal: true, sasl, ssl: true, brokers: ['kafka.prod.example:9093'] }),
        ),
      );
      expect(error.message).toContain('on this machine only');
      expect(error.message).toContain('kafka.prod.example:9093');
    }
    // One remote broker among local ones is enough to refuse.
    expect(() =>
      checkAdminConnection(
        kafka({
          allowPlaintextLocal: true,
          sasl: 'scram-sha-512',
          brokers: ['127.0.0.1:9092', '10.0.0.7:9092'],
        }),
      ),
    ).toThrow(InsecureAdminConnectionError);
  });

  it('refuses local mode without SASL against a remote broker, and names that look local but are not', () => {
    for (const address of [
      'kafka.prod:9092',
      '127.0.0.1.nip.io:9092',
      'localhost.evil:9092',
      '128.0.0.1:9092',
      '127.0.0.1',
    ]) {
      expect(() => checkAdminConnection(kafka({ allowPlaintextLocal: true, brokers: [address] }))).toThrow(
        InsecureAdminConnectionError,
      );
    }
  });

  it('accepts local mode on loopback addresses, with SASL or without', () => {
    for (const address of [
      '127.0.0.1:9092',
      '127.1.2.3:9092',
      'localhost:9092',
      '[::1]:9092',
      'LOCALHOST:9092',
    ]) {
      expect(() =>
        checkAdminConnection(kafka({ allowPlaintextLocal: true, brokers: [address] })),
      ).not.toThrow();
      expect(() =>
        checkAdminConnection(kafka({ allowPlaintextLocal: true, sasl: 'scram-sha-512', brokers: [address] })),
      ).not.toThrow();
    }
  });

  it('keeps the production rules: SASL required, plain only with TLS, any host over TLS', () => {
    expect(() => checkAdminConnection(kafka({}))).toThrow(InsecureAdminConnectionError);
    expect(() => checkAdminConnection(kafka({ sasl: 'plain' }))).toThrow(InsecureAdminConnectionError);
    expect(() =>
      checkAdminConnection(kafka({ sasl: 'scram-sha-512', ssl: true, brokers: ['kafka.prod:9093'] })),
    ).not.toThrow();
  });

  it('refuses local mode on a RabbitMQ URL that is not on this machine, in words about RabbitMQ', () => {
    const error = refusal(() =>
      checkAdminConnection({
        kind: 'rabbitmq',
        url: 'amqps://rabbit.prod.example/orders',
        allowPlaintextLocal: true,
      }),
    );
    expect(error.message).toMatch(/^Refused to connect to RabbitMQ as the admin: /);
    expect(error.message).not.toMatch(/Kafka|SASL/);
    for (const url of ['amqp://127.0.0.1:5672', 'amqp://localhost/orders', 'amqp://[::1]:5672']) {
      expect(() => checkAdminConnection({ kind: 'rabbitmq', url, allowPlaintextLocal: true })).not.toThrow();
    }
    expect(() =>
      checkAdminConnection({ kind: 'rabbitmq', url: 'amqps://rabbit.prod.example/orders' }),
    ).not.toThrow();
  });

  it('refuses amqp:// to a host not on this machine unless insecure transport is accepted (finding 12)', () => {
    const error = refusal(() =>
      checkAdminConnection({ kind: 'rabbitmq', url: 'amqp://ops_admin:secret@rabbit.prod.example/orders' }),
    );
    expect(error.message).toMatch(/^Refused to connect to RabbitMQ as the admin: .*clear text/);
    expect(error.message).toContain('amqps://');
    expect(error.message).not.toContain('secret');
    // Accepted, it says the override was used: the audit log records it (issue 45, finding 11).
    expect(
      checkAdminConnection({
        kind: 'rabbitmq',
        url: 'amqp://10.0.0.7:5672/orders',
        allowInsecureTransport: true,
      }),
    ).toBe(true);
    expect(
      checkAdminConnection({
        kind: 'rabbitmq',
        url: 'amqp://127.0.0.1:5672/orders',
        allowInsecureTransport: true,
      }),
    ).toBe(false);
    expect(
      checkAdminConnection({
        kind: 'rabbitmq',
        url: 'amqps://10.0.0.7/orders',
        allowInsecureTransport: true,
      }),
    ).toBe(false);
  });

  it('refuses Kafka without TLS to a broker not on this machine unless insecure transport is accepted (finding 12)', () => {
    for (const sasl of ['scram-sha-512', 'scram-sha-256'] as const) {
      const error = refusal(() => checkAdminConnection(kafka({ sasl, brokers: ['kafka.prod:9092'] })));
      expect(error.message).toMatch(/^Refused to connect to Kafka as the admin: without TLS/);
      expect(error.message).toContain('kafka.prod:9092');
      expect(
        checkAdminConnection(kafka({ sasl, brokers: ['kafka.prod:9092'], allowInsecureTransport: true })),
      ).toBe(true);
      expect(checkAdminConnection(kafka({ sasl, brokers: ['127.0.0.1:9092'] }))).toBe(false);
    }
  });
});

describe(checkAdminDatabaseUrl.name, () => {
  it('refuses a database not on this machine without TLS, naming neither URL nor password (finding 12)', () => {
    for (const url of [
      'postgres://messaging_redrive:S3cr3t@db.prod.example/admin',
      'postgresql://u:S3cr3t@10.0.0.5:5432/admin?sslmode=disable',
      'postgres://u:S3cr3t@db.prod.example/admin?sslmode=prefer',
      'postgres://u:S3cr3t@db.prod.example/admin?ssl=false',
    ]) {
      let message = '';
      try {
        checkAdminDatabaseUrl(url);
      } catch (error) {
        expect(error).toBeInstanceOf(InsecureAdminConnectionError);
        message = (error as Error).message;
      }
      expect(message).toMatch(/^Refused to connect to the admin database as the admin: .*sslmode=require/);
      expect(message).not.toContain('S3cr3t');
      expect(checkAdminDatabaseUrl(url, true)).toBe(true);
    }
  });

  it('accepts TLS, loopback hosts and Unix sockets', () => {
    for (const url of [
      'postgres://u:p@db.prod.example/admin?sslmode=require',
      'postgres://u:p@db.prod.example/admin?sslmode=verify-full',
      'postgres://u:p@db.prod.example/admin?ssl=true',
      'postgres://u:p@127.0.0.1:5432/admin',
      'postgres://u:p@localhost/admin',
      'postgres://u:p@[::1]/admin',
      'postgres:///admin?host=/var/run/postgresql',
    ]) {
      expect(checkAdminDatabaseUrl(url)).toBe(false);
      expect(checkAdminDatabaseUrl(url, true)).toBe(false);
    }
  });
});
