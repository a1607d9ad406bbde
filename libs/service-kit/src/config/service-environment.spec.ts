import { InvalidEnvironmentError } from './invalid-environment.error';
import { maskPassword, readServiceEnvironment, ServiceDefaults } from './service-environment';

describe(readServiceEnvironment.name, () => {
  const defaults: ServiceDefaults = { serviceName: 'post-service', port: 3000, database: 'post_service' };

  it('falls back to the local services', () => {
    expect(readServiceEnvironment({}, defaults)).toEqual({
      serviceName: 'post-service',
      port: 3000,
      host: undefined,
      database: {
        url: 'postgres://postgres@127.0.0.1:5432/post_service',
        type: 'postgres',
        schema: undefined,
      },
      transport: { kind: 'kafka', brokers: ['127.0.0.1:9092'] },
      relayLeaseMs: undefined,
      relayMode: undefined,
      topology: 'verify',
      keySecret: undefined,
    });
  });

  it('reads every variable, treating empty ones as unset', () => {
    const config = readServiceEnvironment(
      {
        PORT: '4000',
        HOST: '127.0.0.1',
        DATABASE_URL: 'postgresql://app:secret@db:5432/posts',
        DATABASE_SCHEMA: 'e2e_post_1',
        MESSAGING_TRANSPORT: 'rabbitmq',
        AMQP_URL: 'amqp://u:p@rabbit:5672/vhost',
        KAFKA_BROKERS: '',
        RELAY_LEASE_MS: '5000',
        RELAY_MODE: 'logical',
      },
      defaults,
    );
    expect(config).toMatchObject({
      port: 4000,
      host: '127.0.0.1',
      database: { url: 'postgresql://app:secret@db:5432/posts', type: 'postgres', schema: 'e2e_post_1' },
      transport: { kind: 'rabbitmq', url: 'amqp://u:p@rabbit:5672/vhost' },
      relayLeaseMs: 5000,
      relayMode: 'logical',
    });
  });

  it('keeps RELAY_MODE=logical to PostgreSQL', () => {
    expect(() =>
      readServiceEnvironment(
        { RELAY_MODE: 'logical', DATABASE_URL: 'mariadb://root@db:3306/posts' },
        defaults,
      ),
    ).toThrow(/RELAY_MODE='logical': logical reads PostgreSQL's log/);
    expect(() => readServiceEnvironment({ RELAY_MODE: 'cdc' }, defaults)).toThrow(
      /must be 'poll' or 'logical'/,
    );
  });

  it('passes the Kafka session timeout on when it is set', () => {
    expect(readServiceEnvironment({ KAFKA_SESSION_TIMEOUT_MS: '10000' }, defaults).transport).toEqual({
      kind: 'kafka',
      brokers: ['127.0.0.1:9092'],
      sessionTimeoutMs: 10_000,
    });
    expect(() => readServiceEnvironment({ KAFKA_SESSION_TIMEOUT_MS: '1000' }, defaults)).toThrow(
      /KAFKA_SESSION_TIMEOUT_MS='1000': must be at least 6000/,
    );
  });

  it('splits a broker list', () => {
    expect(readServiceEnvironment({ KAFKA_BROKERS: 'a:9092, b:9093' }, defaults).transport).toEqual({
      kind: 'kafka',
      brokers: ['a:9092', 'b:9093'],
    });
  });

  it('takes the RabbitMQ queue type (quorum on a cluster), and refuses another', () => {
    const env = { MESSAGING_TRANSPORT: 'rabbitmq', AMQP_QUEUE_TYPE: 'quorum' };
    expect(readServiceEnvironment(env, defaults).transport).toMatchObject({ queueType: 'quorum' });
    expect(() => readServiceEnvironment({ ...env, AMQP_QUEUE_TYPE: 'mirrored' }, defaults)).toThrow(
      /AMQP_QUEUE_TYPE/,
    );
  });

  it('names every bad variable, with its value and a masked password', () => {
    const error = (() => {
      try {
        readServiceEnvironment(
          {
            PORT: 'eighty',
            MESSAGING_TRANSPORT: 'pulsar',
            DATABASE_URL: 'redis://root:hunter2@db/x',
            KAFKA_BROKERS: 'nohost',
          },
          defaults,
        );
      } catch (e) {
        return e;
      }
    })() as InvalidEnvironmentError;
    expect(error).toBeInstanceOf(InvalidEnvironmentError);
    expect(error.issues.map((i) => i.variable).sort()).toEqual([
      'DATABASE_URL',
      'KAFKA_BROKERS',
      'MESSAGING_TRANSPORT',
      'PORT',
    ]);
    expect(error.message).toContain("PORT='eighty'");
    expect(error.message).toContain("MESSAGING_TRANSPORT='pulsar': must be 'kafka' or 'rabbitmq'");
    expect(error.message).toContain('redis://root:***@db/x');
    expect(error.message).not.toContain('hunter2');
  });

  it.each([
    ['mysql://app:secret@db:3306/posts', 'mysql'],
    ['mariadb://root@127.0.0.1:3306/post_service', 'mariadb'],
  ])('takes %p as a %p database', (url, type) => {
    expect(readServiceEnvironment({ DATABASE_URL: url }, defaults).database).toEqual({
      url,
      type,
      schema: undefined,
    });
  });

  it('refuses DATABASE_SCHEMA with a MySQL or MariaDB URL, saying where the database goes', () => {
    expect(() =>
      readServiceEnvironment({ DATABASE_URL: 'mariadb://root@db/x', DATABASE_SCHEMA: 'e2e' }, defaults),
    ).toThrow(
      /DATABASE_SCHEMA='e2e': is for PostgreSQL only: on MySQL and MariaDB name the database in DATABASE_URL/,
    );
  });

  it('refuses a relay lease under one second', () => {
    expect(() => readServiceEnvironment({ RELAY_LEASE_MS: '10' }, defaults)).toThrow(
      /RELAY_LEASE_MS='10': must be at least 1000/,
    );
  });
});

describe(maskPassword.name, () => {
  it.each([
    ['amqp://ops:secret@rabbit:5672/vhost', 'amqp://ops:***@rabbit:5672/vhost'],
    ['amqp://ops:p@ss@rabbit:5672', 'amqp://ops:***@rabbit:5672'],
    ['amqp://ops:p/ss@w@rabbit:5672/v', 'amqp://ops:***@rabbit:5672/v'],
    ['postgres://postgres@127.0.0.1:5432/db', 'postgres://postgres@127.0.0.1:5432/db'],
    ['amqp://rabbit:5672', 'amqp://rabbit:5672'],
  ])('masks %s as %s', (url, masked) => {
    expect(maskPassword(url)).toBe(masked);
  });
});

describe('Kafka SASL from the environment', () => {
  const defaults: ServiceDefaults = {
    serviceName: 'subscribe-service',
    port: 3001,
    database: 'subscribe_service',
  };

  it('logs in as the service’s own principal', () => {
    const env = {
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_USERNAME: 'subscribe-service',
      KAFKA_PASSWORD: 'pw',
      KAFKA_SSL: 'true',
    };
    expect(readServiceEnvironment(env, defaults).transport).toEqual({
      kind: 'kafka',
      brokers: ['127.0.0.1:9092'],
      sasl: { mechanism: 'scram-sha-512', username: 'subscribe-service', password: 'pw' },
      ssl: true,
    });
  });

  it('wants a user and a password with a mechanism', () => {
    expect(() => readServiceEnvironment({ KAFKA_SASL_MECHANISM: 'scram-sha-512' }, defaults)).toThrow(
      /KAFKA_SASL_MECHANISM/,
    );
  });
});
