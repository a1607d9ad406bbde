import * as amqp from 'amqplib';
import { WireMessage } from 'nest-reliable-messaging/testing';

/** Writes wire messages straight onto a RabbitMQ exchange with confirms, as any producer could. */
export async function publishRaw(connection: amqp.ChannelModel, messages: WireMessage[]): Promise<void> {
  const channel = await connection.createConfirmChannel();
  try {
    for (const message of messages) {
      channel.publish(message.destination, message.headers['msg.type'] ?? 'unknown', message.body, {
        persistent: true,
        headers: message.key === null ? message.headers : { ...message.headers, 'msg.key': message.key },
      });
    }
    await channel.waitForConfirms();
  } finally {
    await channel.close();
  }
}

/** Reads every message currently in a queue (basic.get until empty), acking them. */
export async function drainQueue(connection: amqp.ChannelModel, queue: string): Promise<amqp.GetMessage[]> {
  const channel = await connection.createChannel();
  const messages: amqp.GetMessage[] = [];
  try {
    for (;;) {
      const message = await channel.get(queue, { noAck: true });
      if (message === false) break;
      messages.push(message);
    }
  } finally {
    await channel.close();
  }
  return messages;
}
