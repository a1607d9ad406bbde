/**
 * The testcontainers path (TEST_INFRA=containers), for machines with a Docker engine: it starts
 * PostgreSQL, MariaDB, Kafka (KRaft) and RabbitMQ in containers and points DATABASE_URL, MARIADB_URL,
 * KAFKA_BROKERS and AMQP_URL at them; everything else in the harness is shared with the local path. Images
 * match docker/compose.yml (MariaDB: the version the local path is tested with); the same variables
 * (POSTGRES_IMAGE, MARIADB_IMAGE, KAFKA_IMAGE, RABBITMQ_IMAGE) replace them, as our CI does with images it
 * builds (docker/images/build.sh).
 */
import { startApacheKafka } from './containers-kafka';

interface Stoppable {
  stop(): Promise<unknown>;
}

const running: Stoppable[] = [];

/** The official images, unless the environment names others. */
export function containerImages(env: NodeJS.ProcessEnv = process.env) {
  return {
    postgres: env.POSTGRES_IMAGE || 'postgres:16-alpine',
    mariadb: env.MARIADB_IMAGE || 'mariadb:10.11',
    kafka: env.KAFKA_IMAGE || 'apache/kafka:4.4.0',
    rabbitmq: env.RABBITMQ_IMAGE || 'rabbitmq:4-management-alpine',
  };
}

export function wantsContainers(): boolean {
  return process.env.TEST_INFRA === 'containers';
}

export async function startContainers(): Promise<void> {
  // Loaded lazily: the local path never needs a Docker client.
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const { RabbitMQContainer } = await import('@testcontainers/rabbitmq');
  const { GenericContainer, Wait } = await import('testcontainers');
  const images = containerImages();

  const started = await Promise.allSettled([
    new PostgreSqlContainer(images.postgres).withStartupTimeout(300_000).start(),
    new GenericContainer(images.mariadb)
      .withEnvironment({ MARIADB_ALLOW_EMPTY_ROOT_PASSWORD: '1', MARIADB_DATABASE: 'test' })
      .withExposedPorts(3306)
      .withWaitStrategy(Wait.forLogMessage(/ready for connections/, 2))
      .withStartupTimeout(300_000)
      .start(),
    // apache/kafka through a GenericContainer: the testcontainers Kafka module drives Confluent's image only.
    startApacheKafka(images.kafka),
    // Four containers start at once on a small, busy machine: the modules' defaults (30 s, 120 s) are too short.
    new RabbitMQContainer(images.rabbitmq).withStartupTimeout(300_000).start(),
  ] as const);
  for (const result of started) if (result.status === 'fulfilled') running.push(result.value);
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) {
    // Jest runs no global teardown after a failed global setup: stop those that did start.
    await stopContainers();
    throw failed.reason;
  }
  const value = <T>(result: PromiseSettledResult<T>) => (result as PromiseFulfilledResult<T>).value;
  const [postgres, mariadb, kafka, rabbit] = [
    value(started[0]),
    value(started[1]),
    value(started[2]),
    value(started[3]),
  ];
  process.env.DATABASE_URL = postgres.getConnectionUri();
  process.env.MARIADB_URL = `mysql://root@${mariadb.getHost()}:${mariadb.getMappedPort(3306)}/test`;
  process.env.KAFKA_BROKERS = kafka.brokers;
  process.env.AMQP_URL = rabbit.getAmqpUrl();
}

export async function stopContainers(): Promise<void> {
  await Promise.all(running.splice(0).map((c) => c.stop()));
}
