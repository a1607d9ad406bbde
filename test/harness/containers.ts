/**
 * The testcontainers path (TEST_INFRA=containers), for machines with a Docker engine: it starts
 * PostgreSQL, MariaDB, Kafka (KRaft) and RabbitMQ in containers and points DATABASE_URL, MARIADB_URL,
 * KAFKA_BROKERS and AMQP_URL at them; everything else in the harness is shared with the local path. Images
 * match docker/compose.yml (MariaDB: the version the local path is tested with).
 */
interface Stoppable {
  stop(): Promise<unknown>;
}

const running: Stoppable[] = [];

export function wantsContainers(): boolean {
  return process.env.TEST_INFRA === 'containers';
}

export async function startContainers(): Promise<void> {
  // Loaded lazily: the local path never needs a Docker client.
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const { KafkaContainer } = await import('@testcontainers/kafka');
  const { RabbitMQContainer } = await import('@testcontainers/rabbitmq');
  const { GenericContainer, Wait } = await import('testcontainers');

  const [postgres, mariadb, kafka, rabbit] = await Promise.all([
    new PostgreSqlContainer('postgres:16-alpine').start(),
    new GenericContainer('mariadb:10.11')
      .withEnvironment({ MARIADB_ALLOW_EMPTY_ROOT_PASSWORD: '1', MARIADB_DATABASE: 'test' })
      .withExposedPorts(3306)
      .withWaitStrategy(Wait.forLogMessage(/ready for connections/, 2))
      .start(),
    // The testcontainers Kafka module drives Confluent's image (its start script); 7.9 is Apache Kafka 3.9.
    new KafkaContainer('confluentinc/cp-kafka:7.9.0').withKraft().start(),
    new RabbitMQContainer('rabbitmq:4-management-alpine').start(),
  ]);
  running.push(postgres, mariadb, kafka, rabbit);
  process.env.DATABASE_URL = postgres.getConnectionUri();
  process.env.MARIADB_URL = `mysql://root@${mariadb.getHost()}:${mariadb.getMappedPort(3306)}/test`;
  process.env.KAFKA_BROKERS = `${kafka.getHost()}:${kafka.getMappedPort(9093)}`;
  process.env.AMQP_URL = rabbit.getAmqpUrl();
}

export async function stopContainers(): Promise<void> {
  await Promise.all(running.splice(0).map((c) => c.stop()));
}
