import * as amqp from 'amqplib';
import { MessageHeaders } from '../../../envelope/message-headers';
import { DeadLetterRecord } from '../dead-letter-record';

/** A message got from a dead-letter queue, as a record at `index` (0: the queue's head). */
export function rabbitRecord(queue: string, message: amqp.Message, index: number): DeadLetterRecord {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.properties.headers ?? {})) {
    const text = headerText(value);
    if (text !== undefined) headers[name] = text;
  }
  const { messageId, type } = message.properties as { messageId?: unknown; type?: unknown };
  if (headers[MessageHeaders.ID] === undefined && typeof messageId === 'string' && messageId)
    headers[MessageHeaders.ID] = messageId;
  if (headers[MessageHeaders.TYPE] === undefined && typeof type === 'string' && type)
    headers[MessageHeaders.TYPE] = type;
  return {
    position: { kind: 'queue', index },
    wire: { destination: queue, key: headers[MessageHeaders.KEY] ?? null, headers, body: message.content },
  };
}

/** A header value as text; structured AMQP values (x-death tables) are left out. */
function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}
