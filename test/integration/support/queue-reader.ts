import { randomUUID } from 'node:crypto';
import * as amqp from 'amqplib';

/** The header that marks a reader's own fence message. */
const FENCE = 'x-test-fence';

/** Consumes a RabbitMQ queue with a raw amqplib channel and keeps every message: an independent witness. */
export class QueueReader {
  readonly messages: amqp.ConsumeMessage[] = [];
  private readonly fences = new Set<string>();
  private channel?: amqp.Channel;

  constructor(
    private readonly connection: amqp.ChannelModel,
    private readonly queue: string,
  ) {}

  async start(): Promise<this> {
    this.channel = await this.connection.createChannel();
    await this.channel.consume(
      this.queue,
      (message) => {
        if (!message) return;
        const fence = message.properties.headers?.[FENCE] as string | undefined;
        if (fence) this.fences.add(fence);
        else this.messages.push(message);
      },
      { noAck: true },
    );
    return this;
  }

  /** Resolves once at least `count` messages arrived; rejects after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 30_000): Promise<amqp.ConsumeMessage[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.messages.length < count) {
      if (Date.now() > deadline)
        throw new Error(`Only ${this.messages.length} of ${count} messages on queue ${this.queue}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return this.messages;
  }

  /**
   * Puts a fence message at the queue's tail and waits for it: every message the queue held before has
   * then arrived, so that a test can count them without waiting for a quiet period.
   */
  async settle(timeoutMs = 30_000): Promise<amqp.ConsumeMessage[]> {
    const fence = randomUUID();
    const channel = await this.connection.createConfirmChannel();
    try {
      channel.sendToQueue(this.queue, Buffer.from(''), { headers: { [FENCE]: fence } });
      await channel.waitForConfirms();
    } finally {
      await channel.close();
    }
    const deadline = Date.now() + timeoutMs;
    while (!this.fences.has(fence)) {
      if (Date.now() > deadline) throw new Error(`The fence on queue ${this.queue} did not arrive`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return this.messages;
  }

  async stop(): Promise<void> {
    await this.channel?.close().catch(() => undefined);
    this.channel = undefined;
  }
}

/** Declares a queue bound to a destination's exchange (a durable topic exchange, as the transport declares it). */
export async function bindQueue(
  connection: amqp.ChannelModel,
  exchange: string,
  queue: string,
  pattern = '#',
): Promise<void> {
  const channel = await connection.createChannel();
  try {
    await channel.assertExchange(exchange, 'topic', { durable: true });
    await channel.assertQueue(queue, { durable: false, autoDelete: false });
    await channel.bindQueue(queue, exchange, pattern);
  } finally {
    await channel.close();
  }
}
