import * as amqp from 'amqplib';
import { createConnection } from 'mysql2/promise';
import { Client } from 'pg';
import { KafkaBroker } from './kafka-broker';
import { InfraEnv, localKafkaPort } from './env';

/** Raised when a required service does not answer; the message says how to start it. */
export class ServiceUnavailableError extends Error {
  constructor(
    readonly service: 'PostgreSQL' | 'MariaDB' | 'RabbitMQ' | 'Kafka',
    readonly url: string,
    readonly remedy: string,
    cause: unknown,
  ) {
    super(`${service} is not reachable at ${redact(url)} (${describe(cause)}). ${remedy}`);
    this.name = 'ServiceUnavailableError';
  }
}

export async function checkPostgres(url: string): Promise<void> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    throw new ServiceUnavailableError(
      'PostgreSQL',
      url,
      'Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start (or set DATABASE_URL).',
      error,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function checkMariadb(url: string): Promise<void> {
  try {
    const connection = await createConnection({ uri: url, connectTimeout: 3_000 });
    await connection.query('select 1').finally(() => connection.end());
  } catch (error) {
    throw new ServiceUnavailableError(
      'MariaDB',
      url,
      'Start it with: /etc/init.d/mariadb start (or set MARIADB_URL to a MariaDB 10.6+ or MySQL 8.0.4+ server).',
      error,
    );
  }
}

export async function checkRabbit(url: string): Promise<void> {
  try {
    const connection = await amqp.connect(url, { timeout: 3_000 });
    await connection.close();
  } catch (error) {
    throw new ServiceUnavailableError(
      'RabbitMQ',
      url,
      'Start it with: rabbitmq-server -detached (or set AMQP_URL).',
      error,
    );
  }
}

/** Brings the local Kafka broker up (or checks the one KAFKA_BROKERS names). */
export async function ensureKafka(
  env: InfraEnv,
  log: (line: string) => void = () => undefined,
): Promise<void> {
  const broker = new KafkaBroker({ port: localKafkaPort(env), log });
  if (env.localKafka) {
    const result = await broker.start();
    log(
      result.reused
        ? `Kafka already answers on ${broker.brokers[0]}`
        : `Kafka up on ${broker.brokers[0]} in ${result.elapsedMs} ms`,
    );
    return;
  }
  const probe = new KafkaBroker({ port: localKafkaPort(env) });
  if (!(await probe.isAnswering(5_000))) {
    throw new ServiceUnavailableError(
      'Kafka',
      env.kafkaBrokers.join(','),
      'KAFKA_BROKERS is set, so no local broker is started; start that cluster or unset KAFKA_BROKERS to run `npm run kafka:start`.',
      new Error('no answer'),
    );
  }
}

/** Checks every service, starting local Kafka when needed; throws one error naming every missing one. */
export async function ensureInfrastructure(
  env: InfraEnv,
  log: (line: string) => void = () => undefined,
): Promise<void> {
  const results = await Promise.allSettled([
    checkPostgres(env.databaseUrl),
    checkMariadb(env.mariadbUrl),
    checkRabbit(env.amqpUrl),
    ensureKafka(env, log),
  ]);
  const failures = results.flatMap((r) => (r.status === 'rejected' ? [describe(r.reason)] : []));
  if (failures.length > 0) throw new Error(`Infrastructure is not ready:\n- ${failures.join('\n- ')}`);
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

function redact(url: string): string {
  return url.replace(/\/\/([^:/@]+):([^@]+)@/, '//$1:***@');
}
