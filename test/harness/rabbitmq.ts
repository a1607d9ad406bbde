import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as amqp from 'amqplib';
import { infraEnv } from './infra';

/** Connects to the test RabbitMQ and remembers every queue and exchange a suite names, to delete them after. */
export class RabbitFixture {
  private connection?: amqp.ChannelModel;
  private readonly queues = new Set<string>();
  private readonly exchanges = new Set<string>();
  private readonly queuePrefixes = new Set<string>();

  constructor(readonly url: string = infraEnv().amqpUrl) {}

  async connect(): Promise<amqp.ChannelModel> {
    this.connection ??= await amqp.connect(this.url);
    return this.connection;
  }

  /** Marks names for deletion in `cleanup()`. */
  track(names: { queues?: string[]; exchanges?: string[] }): void {
    names.queues?.forEach((q) => this.queues.add(q));
    names.exchanges?.forEach((e) => this.exchanges.add(e));
  }

  /** Marks a consumer's exchange, its group's queue and that queue's retry tiers and DLQ for deletion. */
  trackConsumer(exchange: string, group: string): void {
    this.track({ exchanges: [exchange], queues: [`${exchange}.${group}`] });
    this.trackQueuePrefix(`${exchange}.${group}.`);
  }

  /** Marks every queue whose name starts with `prefix` for deletion (queues the code under test names). */
  trackQueuePrefix(prefix: string): void {
    this.queuePrefixes.add(prefix);
  }

  async cleanup(): Promise<void> {
    const connection = await this.connect();
    if (this.queuePrefixes.size > 0) {
      const { stdout } = await run('rabbitmqctl', ['list_queues', 'name', '-q', '--no-table-headers']);
      const prefixes = [...this.queuePrefixes];
      for (const name of stdout.split('\n').map((line) => line.trim())) {
        if (prefixes.some((prefix) => name.startsWith(prefix))) this.queues.add(name);
      }
    }
    for (const queue of this.queues) {
      const channel = await connection.createChannel();
      await channel.deleteQueue(queue).catch(() => undefined);
      await channel.close().catch(() => undefined);
    }
    for (const exchange of this.exchanges) {
      const channel = await connection.createChannel();
      await channel.deleteExchange(exchange).catch(() => undefined);
      await channel.close().catch(() => undefined);
    }
    this.queues.clear();
    this.exchanges.clear();
    this.queuePrefixes.clear();
    await connection.close().catch(() => undefined);
    this.connection = undefined;
  }
}

const run = promisify(execFile);

/**
 * Closes, from the broker's side, every connection whose client-provided name contains `fragment`: what a
 * broker restart or an operator does to a client. Uses the local node's rabbitmqctl. Returns how many.
 */
export async function forceCloseRabbitConnections(fragment: string): Promise<number> {
  const { stdout } = await run('rabbitmqctl', ['list_connections', 'pid', 'client_properties', '-q']);
  const pids = stdout
    .split('\n')
    .filter((line) => line.includes(fragment))
    .map((line) => line.split('\t')[0]);
  for (const pid of pids) await run('rabbitmqctl', ['close_connection', pid, 'closed by a test']);
  return pids.length;
}
