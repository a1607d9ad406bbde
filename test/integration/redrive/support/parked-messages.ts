import * as amqp from 'amqplib';
import { FailureCategory } from 'nest-reliable-messaging';
import {
  DeadLetterCopyPolicy,
  deadLetterCopy,
  failureHeaders,
  parseKeySecret,
  WireMessage,
} from 'nest-reliable-messaging/testing';
import { LOCAL_KEY_SECRET } from '../../../../tools/infra/local-secrets';
import { orderMessage } from '../../support/raw-messages';

/** Dead-letter copies as the test apps make them (the local key secret, no extra headers). */
export const LOCAL_DEAD_LETTER_POLICY: DeadLetterCopyPolicy = {
  keySecret: parseKeySecret(LOCAL_KEY_SECRET, 'LOCAL_KEY_SECRET'),
  carryHeaders: [],
};

/**
 * The copy a consumer of `destination` in `group` parks after order `seq` failed once with a TRANSIENT
 * error: built with the library's own dead-letter functions, as the subscribers build it.
 */
export function parkedOrder(
  destination: string,
  group: string,
  seq: number,
  customer = `c${seq % 3}`,
): WireMessage {
  const original = orderMessage(destination, { customer, seq });
  const failure = failureHeaders(
    {
      category: FailureCategory.TRANSIENT,
      code: 'DOWNSTREAM_DOWN',
      originDestination: destination,
      attempt: 1,
      now: new Date(),
    },
    original.headers,
  );
  return deadLetterCopy(original, `${destination}.${group}.dlq`, failure, LOCAL_DEAD_LETTER_POLICY);
}

/** Declares the group's work queue and dead-letter queue, as the RabbitMQ subscriber does (`arguments`: of both). */
export async function declareGroupQueues(
  connection: amqp.ChannelModel,
  workQueue: string,
  args?: Record<string, unknown>,
): Promise<void> {
  const channel = await connection.createChannel();
  try {
    await channel.assertQueue(workQueue, { durable: true, arguments: args });
    await channel.assertQueue(`${workQueue}.dlq`, { durable: true, arguments: args });
  } finally {
    await channel.close();
  }
}

/** Publishes messages straight to the queue their `destination` names, with confirms, as a subscriber parks them. */
export async function sendToQueues(
  connection: amqp.ChannelModel,
  messages: readonly WireMessage[],
): Promise<void> {
  const channel = await connection.createConfirmChannel();
  try {
    for (const message of messages) {
      channel.sendToQueue(message.destination, message.body, {
        persistent: true,
        messageId: message.headers['msg.id'],
        headers:
          message.key === null ? { ...message.headers } : { ...message.headers, 'msg.key': message.key },
      });
    }
    await channel.waitForConfirms();
  } finally {
    await channel.close();
  }
}

/** Queue depth (ready messages). */
export async function depthOf(connection: amqp.ChannelModel, queue: string): Promise<number> {
  const channel = await connection.createChannel();
  try {
    return (await channel.checkQueue(queue)).messageCount;
  } finally {
    await channel.close();
  }
}
