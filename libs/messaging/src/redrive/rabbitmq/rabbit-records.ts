import * as amqp from 'amqplib';
import { MessageHeaders } from '../../envelope/message-headers';
import { amqpHeaders } from '../../transports/rabbitmq/amqp-headers';
import { DeadLetterRecord } from '../dead-letter-record';

/** A message got from a dead-letter queue, as a record at `index` (0: the queue's head). */
export function rabbitRecord(queue: string, message: amqp.Message, index: number): DeadLetterRecord {
  const headers = amqpHeaders(message);
  return {
    position: { kind: 'queue', index },
    wire: { destination: queue, key: headers[MessageHeaders.KEY] ?? null, headers, body: message.content },
  };
}
