import * as amqp from 'amqplib';
import { PostCreated } from '@app/contracts';
import { encodeEnvelope, WireMessage } from 'nest-reliable-messaging/testing';
import { newMessageId } from 'nest-reliable-messaging';
import { testKafka } from '../../harness/kafka';
import { RawKafkaProducer } from '../../integration/support/kafka-wire';
import { publishRaw } from '../../integration/support/rabbit-wire';
import { withBody, withHeaders } from '../../integration/support/raw-messages';

export { withBody, withHeaders };

/** A `PostCreated` message as post-service's relay puts it on the wire (keyed by author). */
export function postCreatedMessage(
  post: { postId: number; authorId: number; title: string },
  messageId: string = newMessageId(),
): WireMessage {
  return encodeEnvelope(
    {
      messageId,
      type: PostCreated.type,
      destination: PostCreated.destination,
      key: String(post.authorId),
      occurredAt: new Date(),
      headers: {},
    },
    JSON.stringify({ eventId: messageId, ...post }),
  );
}

/** The message id a wire message carries (`msg.id`), or undefined. */
export function idOf(message: WireMessage): string | undefined {
  return message.headers['msg.id'];
}

/** Writes messages straight onto the services' topic or exchange, as any client could, one by one in order. */
export interface RawWriter {
  /** Resolves when the broker confirmed the message; rejects with the broker's refusal. */
  write(message: WireMessage): Promise<void>;
  close(): Promise<void>;
}

export async function rawWriter(
  transport: 'kafka' | 'rabbitmq',
  broker: { kafkaBrokers: readonly string[]; amqpUrl: string },
): Promise<RawWriter> {
  if (transport === 'kafka') {
    const producer = new RawKafkaProducer(testKafka([...broker.kafkaBrokers], 'faults-raw-writer'));
    return { write: (message) => producer.send([message]), close: () => producer.stop() };
  }
  const connection = await amqp.connect(broker.amqpUrl);
  return {
    write: (message) => publishRaw(connection, [message]),
    close: () => connection.close().catch(() => undefined),
  };
}
