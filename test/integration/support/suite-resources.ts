import { TestingModule } from '@nestjs/testing';
import { Kafka } from 'kafkajs';
import { KafkaTopics, testKafka } from '../../harness/kafka';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { RabbitFixture } from '../../harness/rabbitmq';
import { RawKafkaProducer } from './kafka-wire';

/** What a suite owns: its schema (created before its tests) and the apps it starts (closed after them). */
export interface SuiteResources {
  readonly schema: TestSchema;
  readonly apps: TestingModule[];
}

/**
 * Registers the suite's `beforeAll`/`afterAll`: a schema of its own named after `schemaPrefix`; afterwards
 * its apps are closed, then `cleanups` run in order, then the schema is dropped.
 */
export function useSuiteResources(
  schemaPrefix: string,
  ...cleanups: Array<() => Promise<unknown>>
): SuiteResources {
  let schema: TestSchema | undefined;
  const apps: TestingModule[] = [];
  beforeAll(async () => {
    schema = await createTestSchema(schemaPrefix);
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    for (const cleanup of cleanups) await cleanup();
    await schema?.drop();
  });
  return {
    get schema(): TestSchema {
      if (!schema) throw new Error('The suite schema exists only inside tests and hooks');
      return schema;
    },
    apps,
  };
}

/** A Kafka suite's resources: its schema and apps, plus topics and a raw producer cleaned up after it. */
export function useKafkaSuite(schemaPrefix: string): SuiteResources & {
  kafka: Kafka;
  topics: KafkaTopics;
  raw: RawKafkaProducer;
} {
  const kafka = testKafka();
  const topics = new KafkaTopics(kafka);
  const raw = new RawKafkaProducer(kafka);
  const suite = useSuiteResources(
    schemaPrefix,
    () => raw.stop(),
    () => topics.cleanup(),
  );
  return Object.assign(suite, { kafka, topics, raw });
}

/** A RabbitMQ suite's resources: its schema and apps, plus the exchanges and queues it declared. */
export function useRabbitSuite(schemaPrefix: string): SuiteResources & { rabbit: RabbitFixture } {
  const rabbit = new RabbitFixture();
  const suite = useSuiteResources(schemaPrefix, () => rabbit.cleanup());
  return Object.assign(suite, { rabbit });
}
