import * as amqp from 'amqplib';
import { Admin, Kafka, logLevel } from 'kafkajs';
import { infraEnv } from '../../tools/infra/env';

/** A kafkajs client for the bench's own producers and admin work, quiet unless something is wrong. */
export function benchKafka(clientId = 'bench'): Kafka {
  return new Kafka({ clientId, brokers: infraEnv().kafkaBrokers, logLevel: logLevel.ERROR });
}

/**
 * Topics, exchanges and queues of the run's own: created here or named with `track*`, deleted by `cleanup()`.
 */
export class BrokerFixtures {
  readonly kafka = benchKafka('bench-admin');
  private admin?: Admin;
  private connection?: amqp.ChannelModel;
  private readonly topics = new Set<string>();
  private readonly exchanges = new Set<string>();
  private readonly queues = new Set<string>();

  /** Creates a topic with `partitions` partitions (the library's default is 3) and `configEntries`. */
  async topic(
    name: string,
    partitions = 3,
    configEntries?: Array<{ name: string; value: string }>,
  ): Promise<string> {
    const admin = await this.getAdmin();
    await admin.createTopics({
      topics: [{ topic: name, numPartitions: partitions, configEntries }],
      waitForLeaders: true,
    });
    this.topics.add(name);
    return name;
  }

  /** A durable topic exchange (as the library declares it) and, if named, a durable queue bound with '#'. */
  async exchange(name: string, queue?: string): Promise<void> {
    const channel = await (await this.rabbit()).createChannel();
    try {
      await channel.assertExchange(name, 'topic', { durable: true });
      this.exchanges.add(name);
      if (queue) {
        await channel.assertQueue(queue, { durable: true });
        await channel.bindQueue(queue, name, '#');
        this.queues.add(queue);
      }
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  async purgeQueue(queue: string): Promise<void> {
    const channel = await (await this.rabbit()).createChannel();
    try {
      await channel.purgeQueue(queue);
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  /** Messages ready in a queue. */
  async queueDepth(queue: string): Promise<number> {
    const channel = await (await this.rabbit()).createChannel();
    try {
      return (await channel.checkQueue(queue)).messageCount;
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  trackTopics(...names: string[]): void {
    names.forEach((n) => this.topics.add(n));
  }

  trackQueues(...names: string[]): void {
    names.forEach((n) => this.queues.add(n));
  }

  async rabbit(): Promise<amqp.ChannelModel> {
    this.connection ??= await amqp.connect(infraEnv().amqpUrl);
    return this.connection;
  }

  async cleanup(): Promise<void> {
    if (this.topics.size > 0) {
      const admin = await this.getAdmin();
      const existing = new Set(await admin.listTopics());
      const topics = [...this.topics].filter((t) => existing.has(t));
      if (topics.length > 0) await admin.deleteTopics({ topics }).catch(() => undefined);
    }
    if (this.queues.size > 0 || this.exchanges.size > 0) {
      const connection = await this.rabbit();
      for (const queue of this.queues) await withChannel(connection, (c) => c.deleteQueue(queue));
      for (const exchange of this.exchanges) await withChannel(connection, (c) => c.deleteExchange(exchange));
    }
    this.topics.clear();
    this.queues.clear();
    this.exchanges.clear();
    await this.close();
  }

  /** Closes the clients, deleting nothing. */
  async close(): Promise<void> {
    await this.admin?.disconnect().catch(() => undefined);
    this.admin = undefined;
    await this.connection?.close().catch(() => undefined);
    this.connection = undefined;
  }

  private async getAdmin(): Promise<Admin> {
    if (!this.admin) {
      const admin = this.kafka.admin();
      await admin.connect();
      this.admin = admin;
    }
    return this.admin;
  }
}

/** Runs one operation on a channel of its own (a failed operation closes its channel, not the others). */
async function withChannel(
  connection: amqp.ChannelModel,
  work: (channel: amqp.Channel) => Promise<unknown>,
): Promise<void> {
  const channel = await connection.createChannel();
  channel.on('error', () => undefined);
  await work(channel).catch(() => undefined);
  await channel.close().catch(() => undefined);
}
