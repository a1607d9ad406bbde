import { TestingModule } from '@nestjs/testing';
import { Kafka } from 'kafkajs';
import { KafkaTopics, testKafka } from '../../harness/kafka';
import { RabbitFixture } from '../../harness/rabbitmq';
import { createTestDatabase, TestDatabase, TestDialect } from '../../harness/test-database';
import { RawKafkaProducer } from './kafka-wire';

/**
 * What a suite owns: its schema or database (created before its tests) and the apps it starts (closed after
 * them).
 */
export interface SuiteResources {
  readonly schema: TestDatabase;
  readonly apps: TestingModule[];
}

/**
 * Registers the suite's `beforeAll`/`afterAll`: a schema (PostgreSQL) or database (MariaDB) of its own named
 * after `schemaPrefix`; afterwards its apps are closed, then `cleanups` run in order, then the schema is
 * dropped.
 */
export function useSuiteResources(
  schemaPrefix: string,
  dialect: TestDialect,
  ...cleanups: Array<() => Promise<unknown>>
): SuiteResources {
  let schema: TestDatabase | undefined;
  const apps: TestingModule[] = [];
  beforeAll(async () => {
    schema = await createTestDatabase(dialect, schemaPrefix);
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    for (const cleanup of cleanups) await cleanup();
    await schema?.drop();
  });
  return {
    get schema(): TestDatabase {
      if (!schema) throw new Error('The suite schema exists only inside tests and hooks');
      return schema;
    },
    apps,
  };
}

/** A Kafka suite's resources: its schema and apps, plus topics and a raw producer cleaned up after it. */
export function useKafkaSuite(
  schemaPrefix: string,
  dialect: TestDialect = 'postgres',
): SuiteResources & {
  kafka: Kafka;
  topics: KafkaTopics;
  raw: RawKafkaProducer;
} {
  const kafka = testKafka();
  const topics = new KafkaTopics(kafka);
  const raw = new RawKafkaProducer(kafka);
  const suite = useSuiteResources(
    schemaPrefix,
    dialect,
    () => raw.stop(),
    () => topics.cleanup(),
  );
  return Object.assign(suite, { kafka, topics, raw });
}

/** A RabbitMQ suite's resources: its schema and apps, plus the exchanges and queues it declared. */
export function useRabbitSuite(
  schemaPrefix: string,
  dialect: TestDialect = 'postgres',
): SuiteResources & { rabbit: RabbitFixture } {
  const rabbit = new RabbitFixture();
  const suite = useSuiteResources(schemaPrefix, dialect, () => rabbit.cleanup());
  return Object.assign(suite, { rabbit });
}
