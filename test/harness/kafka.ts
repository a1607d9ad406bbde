import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Admin, ITopicConfig, Kafka, logLevel } from 'kafkajs';
import { KafkaBroker, KafkaBrokerSasl } from '../../tools/infra/kafka-broker';
import { freePort } from '../../tools/infra/ports';
import { infraEnv } from './infra';

/** A kafkajs client for the shared test broker, quiet unless something is wrong. */
export function testKafka(brokers: string[] = infraEnv().kafkaBrokers, clientId = 'test'): Kafka {
  return new Kafka({ clientId, brokers, logLevel: logLevel.ERROR });
}

/** Creates topics and deletes them again in `cleanup()`. */
export class KafkaTopics {
  private admin?: Admin;
  private readonly created = new Set<string>();
  private readonly prefixes = new Set<string>();

  constructor(private readonly kafka: Kafka = testKafka()) {}

  /** Creates `topic`; `configEntries` (e.g. `max.message.bytes`) hold from its first record on. */
  async create(
    topic: string,
    numPartitions = 3,
    configEntries?: ITopicConfig['configEntries'],
  ): Promise<string> {
    this.admin ??= this.kafka.admin();
    await this.admin.connect();
    const admin = this.admin;
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions, configEntries }], waitForLeaders: true });
    } catch (error) {
      // Under load the broker's metadata can lag its controller: kafkajs waits out LEADER_NOT_AVAILABLE
      // only, so "does not host this topic-partition" means created, not known yet (as the library does).
      if ((error as { type?: unknown }).type !== 'UNKNOWN_TOPIC_OR_PARTITION') throw error;
      await waitForLeaders(admin, topic);
    }
    this.created.add(topic);
    return topic;
  }

  /** Deletes topics created elsewhere (by the code under test) too. */
  track(...topics: string[]): void {
    topics.forEach((t) => this.created.add(t));
  }

  /** Deletes every topic whose name starts with `prefix` (copies the code under test names by itself). */
  trackPrefix(prefix: string): void {
    this.prefixes.add(prefix);
  }

  async cleanup(): Promise<void> {
    if (this.created.size > 0 || this.prefixes.size > 0) {
      this.admin ??= this.kafka.admin();
      await this.admin.connect();
      const existing = await this.admin.listTopics();
      const prefixes = [...this.prefixes];
      const topics = existing.filter((t) => this.created.has(t) || prefixes.some((p) => t.startsWith(p)));
      if (topics.length > 0) await this.admin.deleteTopics({ topics }).catch(() => undefined);
    }
    this.created.clear();
    this.prefixes.clear();
    await this.admin?.disconnect();
    this.admin = undefined;
  }
}

/** Resolves once the metadata names a leader for every partition of `topic`; throws after 30 s. */
async function waitForLeaders(admin: Admin, topic: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] }).catch((error: unknown) => {
      if (Date.now() > deadline) throw error;
      return undefined;
    });
    if (metadata?.topics.every((t) => t.partitions.every((p) => p.leader >= 0))) return;
    if (Date.now() > deadline) throw new Error(`Topic ${topic} has no leader 30 s after it was created`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export { freePort } from '../../tools/infra/ports';

/**
 * A second Kafka broker of a suite's own, on free ports with its own data: the suite may stop, kill and
 * restart it without pulling the shared broker from under the suites running beside it. With `sasl`, it
 * authenticates with SCRAM and authorizes with ACLs (`StandardAuthorizer`).
 */
export async function startPrivateBroker(sasl?: KafkaBrokerSasl): Promise<KafkaBroker> {
  const broker = new KafkaBroker({
    port: await freePort(),
    controllerPort: await freePort(),
    stateDir: mkdtempSync(path.join(os.tmpdir(), 'kafka-private-')),
    heap: '384m',
    sasl,
  });
  try {
    await broker.start();
  } catch (error) {
    await broker.destroy();
    throw error;
  }
  return broker;
}
