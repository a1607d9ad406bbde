import * as amqp from 'amqplib';
import { infraEnv } from './infra';

/** Connects to the test RabbitMQ and remembers every queue and exchange a suite names, to delete them after. */
export class RabbitFixture {
  private connection?: amqp.ChannelModel;
  private readonly queues = new Set<string>();
  private readonly exchanges = new Set<string>();

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

  async cleanup(): Promise<void> {
    const connection = await this.connect();
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
    await connection.close().catch(() => undefined);
    this.connection = undefined;
  }
}
