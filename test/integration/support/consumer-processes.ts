import * as path from 'node:path';
import { WireMessage } from 'nest-reliable-messaging/testing';
import { KafkaTopics, testKafka } from '../../harness/kafka';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { RabbitFixture } from '../../harness/rabbitmq';
import { FixtureProcess } from './child-process';
import { RawKafkaProducer } from './kafka-wire';
import { createMessagingApp, kafkaTransport } from './messaging-app';
import { HandledOrder } from './orders-consumer.fixture';
import { publishRaw } from './rabbit-wire';

/** The consumer process's script (`consumer-process.ts`), for a test that starts one itself. */
export const CONSUMER_PROCESS = path.resolve(__dirname, 'consumer-process.ts');

/** A suite's consumers in processes of their own (see `consumer-process.ts`), and what they consume. */
export interface ConsumerProcesses {
  readonly schema: TestSchema;
  /** The suite's RabbitMQ connections. */
  readonly rabbit: RabbitFixture;
  /** Creates a destination of `partitions` for a group (Kafka: a topic; RabbitMQ: named for cleanup). */
  destination(
    transport: 'kafka' | 'rabbitmq',
    name: string,
    group: string,
    partitions: number,
  ): Promise<void>;
  /** Starts a consumer process configured by `env`; resolves once it consumes. */
  start(env: Record<string, string>): Promise<FixtureProcess>;
  /** Writes messages onto their destination as any producer would. */
  send(transport: 'kafka' | 'rabbitmq', messages: WireMessage[]): Promise<void>;
}

/**
 * Registers a suite's `beforeAll`/`afterAll` for consumers run as processes (tests that SIGKILL them): a
 * schema named after `schemaPrefix` with the handled_orders table (created once, before any process starts);
 * afterwards the processes are killed and the topics, queues and schema removed.
 */
export function useConsumerProcesses(schemaPrefix: string): ConsumerProcesses {
  let schema: TestSchema | undefined;
  const topics = new KafkaTopics();
  const rabbit = new RabbitFixture();
  const processes: FixtureProcess[] = [];

  beforeAll(async () => {
    schema = await createTestSchema(schemaPrefix);
    const app = await createMessagingApp({
      schema: schema.name,
      transport: kafkaTransport(),
      entities: [HandledOrder],
      messaging: { relay: { enabled: false } },
    });
    await app.close();
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await topics.cleanup();
    await rabbit.cleanup();
    await schema?.drop();
  });

  return {
    get schema(): TestSchema {
      if (!schema) throw new Error('The suite schema exists only inside tests and hooks');
      return schema;
    },
    rabbit,
    async destination(transport, name, group, partitions) {
      if (transport === 'kafka') {
        await topics.create(name, partitions);
        topics.trackPrefix(`${name}.${group}.`);
      } else {
        rabbit.track({ exchanges: [name], queues: [`${name}.${group}`] });
        rabbit.trackQueuePrefix(`${name}.${group}.`);
      }
    },
    async start(env) {
      const consumer = new FixtureProcess(CONSUMER_PROCESS, env);
      processes.push(consumer);
      return consumer.start();
    },
    async send(transport, messages) {
      if (transport === 'rabbitmq') return publishRaw(await rabbit.connect(), messages);
      const raw = new RawKafkaProducer(testKafka());
      await raw.send(messages);
      await raw.stop();
    },
  };
}
