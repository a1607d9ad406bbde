import { checkAdminConnection, KafkaRedriveBroker } from './admin-connection';
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

  it('keeps the production rules: SASL required, plain only with TLS, any host', () => {
    expect(() => checkAdminConnection(kafka({}))).toThrow(InsecureAdminConnectionError);
    expect(() => checkAdminConnection(kafka({ sasl: 'plain' }))).toThrow(InsecureAdminConnectionError);
    expect(() =>
      checkAdminConnection(kafka({ sasl: 'scram-sha-512', brokers: ['kafka.prod:9093'] })),
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
});
