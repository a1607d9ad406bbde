import * as amqp from 'amqplib';
import { MessageHeaders } from 'nest-reliable-messaging';
import { WireMessage } from 'nest-reliable-messaging/testing';
import { infraEnv } from '../../tools/infra/env';
import { batchProducer, KafkaClientName } from './kafka-clients';
import { TransportKind } from './plan';

/**
 * The baseline publishers: the raw clients with the relay's guarantee and nothing else. `publish` resolves
 * once the broker confirmed the whole batch.
 */
export interface RawPublisher {
  publish(batch: readonly WireMessage[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Kafka: the producer of `client` (kafkajs by default) as the library configures it, idempotent with
 * acks=all, one send per batch (`lib/kafka-clients.ts`); RabbitMQ: an amqplib confirm channel.
 */
export async function rawPublisher(
  kind: TransportKind,
  client: KafkaClientName = 'kafkajs',
): Promise<RawPublisher> {
  if (kind === 'rabbitmq') return RawRabbitPublisher.connect();
  const producer = await batchProducer(client);
  return { publish: (batch) => producer.send(batch), close: () => producer.close() };
}

/** amqplib: a confirm channel, persistent and mandatory messages, waiting for the confirms of each batch. */
class RawRabbitPublisher implements RawPublisher {
  private constructor(
    private readonly connection: amqp.ChannelModel,
    private readonly channel: amqp.ConfirmChannel,
  ) {}

  static async connect(): Promise<RawRabbitPublisher> {
    const connection = await amqp.connect(infraEnv().amqpUrl);
    const channel = await connection.createConfirmChannel();
    return new RawRabbitPublisher(connection, channel);
  }

  async publish(batch: readonly WireMessage[]): Promise<void> {
    for (const m of batch) {
      this.channel.publish(m.destination, m.headers[MessageHeaders.TYPE] ?? '', m.body, {
        mandatory: true,
        persistent: true,
        contentType: m.headers[MessageHeaders.CONTENT_TYPE],
        messageId: m.headers[MessageHeaders.ID],
        type: m.headers[MessageHeaders.TYPE],
        headers: m.key === null ? { ...m.headers } : { ...m.headers, [MessageHeaders.KEY]: m.key },
      });
    }
    await this.channel.waitForConfirms();
  }

  async close(): Promise<void> {
    await this.channel.close().catch(() => undefined);
    await this.connection.close().catch(() => undefined);
  }
}

/** Publishes `messages` with the raw client of `kind`, in awaited batches of 200, then closes it. */
export async function publishInBatches(kind: TransportKind, messages: readonly WireMessage[]): Promise<void> {
  const publisher = await rawPublisher(kind);
  try {
    for (let i = 0; i < messages.length; i += 200) await publisher.publish(messages.slice(i, i + 200));
  } finally {
    await publisher.close();
  }
}
