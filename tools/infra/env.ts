/**
 * Where the real services are. Environment variables override every default, so tests and the demo run
 * against any infrastructure (a CI service, a compose stack, a remote cluster).
 */
export interface InfraEnv {
  /** PostgreSQL server URL (a database on it; tests create schemas and databases beside it). */
  databaseUrl: string;
  /** MariaDB (or MySQL) server URL (a database on it; tests create databases beside it). */
  mariadbUrl: string;
  /** Kafka bootstrap brokers. */
  kafkaBrokers: string[];
  /** RabbitMQ URL. */
  amqpUrl: string;
  /** True when KAFKA_BROKERS was not given: the project runs its own local broker. */
  localKafka: boolean;
}

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
export const DEFAULT_MARIADB_URL = 'mysql://root@127.0.0.1:3306/test';
export const DEFAULT_KAFKA_BROKERS = '127.0.0.1:9092';
export const DEFAULT_AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';

export function infraEnv(env: NodeJS.ProcessEnv = process.env): InfraEnv {
  return {
    databaseUrl: env.DATABASE_URL || DEFAULT_DATABASE_URL,
    mariadbUrl: env.MARIADB_URL || DEFAULT_MARIADB_URL,
    kafkaBrokers: (env.KAFKA_BROKERS || DEFAULT_KAFKA_BROKERS)
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean),
    amqpUrl: env.AMQP_URL || DEFAULT_AMQP_URL,
    localKafka: !env.KAFKA_BROKERS,
  };
}

/** The port of a local bootstrap address such as 127.0.0.1:9092. */
export function localKafkaPort(env: InfraEnv): number {
  const port = Number(env.kafkaBrokers[0]?.split(':')[1] ?? 9092);
  return Number.isInteger(port) ? port : 9092;
}
