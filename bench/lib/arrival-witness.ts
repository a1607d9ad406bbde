import * as amqp from 'amqplib';
import { Consumer } from 'kafkajs';
import { BrokerFixtures } from './brokers';
import { benchName } from './databases';
import { HandlerProbe } from './handler-probe';
import { TransportKind } from './plan';

/**
 * A raw reader beside the consumer (its own Kafka group, or its own queue bound to the exchange): it
 * records when each message reached the broker's consumers, without an inbox or a handler. Commit → this
 * arrival is the relay's share of the latency; arrival → handler start is the consumer's.
 */
export class ArrivalWitness {
  private stopFn: () => Promise<void> = async () => undefined;

  /** `queue`: a RabbitMQ queue already declared and bound (by the parent process); otherwise one is made. */
  constructor(
    private readonly kind: TransportKind,
    private readonly destination: string,
    private readonly brokers: BrokerFixtures,
    readonly arrivals: HandlerProbe = new HandlerProbe(),
    private readonly queue?: string,
  ) {}

  async start(): Promise<this> {
    const record = (body: Buffer | null) => {
      try {
        const { run, seq } = JSON.parse(body?.toString('utf8') ?? '{}') as { run?: string; seq?: number };
        if (typeof run === 'string' && typeof seq === 'number') this.arrivals.started(run, seq);
      } catch {
        // not a bench message
      }
    };
    if (this.kind === 'kafka') {
      const consumer: Consumer = this.brokers.kafka.consumer({
        groupId: benchName('bench_witness'),
        maxWaitTimeInMs: 100,
      });
      await consumer.connect();
      await consumer.subscribe({ topic: this.destination, fromBeginning: false });
      await consumer.run({ eachMessage: async ({ message }) => record(message.value) });
      this.stopFn = () => consumer.disconnect();
    } else {
      const queue = this.queue ?? witnessQueue(this.destination);
      if (!this.queue) await this.brokers.exchange(this.destination, queue);
      const channel = await (await this.brokers.rabbit()).createChannel();
      await channel.consume(
        queue,
        (message: amqp.ConsumeMessage | null) => record(message?.content ?? null),
        {
          noAck: true,
        },
      );
      this.stopFn = () => channel.close();
    }
    return this;
  }

  async stop(): Promise<void> {
    await this.stopFn().catch(() => undefined);
  }
}

/** A name for a witness's own queue on `destination`'s exchange. */
export function witnessQueue(destination: string): string {
  return benchName(`${destination}_witness`);
}
