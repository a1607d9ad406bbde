import { resolveAdminOptions } from './admin-options';
import { CliUsageError } from './cli-usage.error';

describe(resolveAdminOptions.name, () => {
  it('takes the RabbitMQ admin user from the admin URL', () => {
    const env = { MESSAGING_ADMIN_AMQP_URL: 'amqp://ops%40corp:p%2Fw@rabbit:5672/orders' };
    expect(resolveAdminOptions({}, env)).toEqual({
      broker: { kind: 'rabbitmq', url: env.MESSAGING_ADMIN_AMQP_URL },
      credential: { principal: 'ops@corp', secret: 'p/w' },
    });
  });

  it('prefers the principal flag and the token variable to the URL user', () => {
    const env = { MESSAGING_ADMIN_AMQP_URL: 'amqp://a:b@rabbit/', MESSAGING_ADMIN_TOKEN: 't' };
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

  it('reads Kafka brokers, SASL and TLS', () => {
    const env = {
      MESSAGING_ADMIN_KAFKA_BROKERS: 'k1:9092, k2:9092',
      MESSAGING_ADMIN_KAFKA_SASL: 'scram-sha-512',
      MESSAGING_ADMIN_KAFKA_SSL: 'true',
      MESSAGING_ADMIN_PRINCIPAL: 'redrive-admin',
      MESSAGING_ADMIN_TOKEN: 'secret',
    };
    expect(resolveAdminOptions({}, env)).toEqual({
      broker: { kind: 'kafka', brokers: ['k1:9092', 'k2:9092'], sasl: 'scram-sha-512', ssl: true },
      credential: { principal: 'redrive-admin', secret: 'secret' },
    });
    expect(() => resolveAdminOptions({ kafkaSasl: 'gssapi' }, env)).toThrow(/Unknown SASL mechanism/);
  });
});
