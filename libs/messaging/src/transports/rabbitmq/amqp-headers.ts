import * as amqp from 'amqplib';
import { MessageHeaders } from '../../envelope/message-headers';

/**
 * A received AMQP message's headers as text, the shape every other part of the library reads. Producers
 * other than this library may set only the AMQP properties: a message id, type or content type found only
 * there is taken as the matching `msg.*` header. Structured AMQP values (x-death tables) are left out.
 */
export function amqpHeaders(message: amqp.Message): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.properties.headers ?? {})) {
    const text = headerText(value);
    if (text !== undefined) headers[name] = text;
  }
  const { messageId, type, contentType } = message.properties as {
    messageId?: unknown;
    type?: unknown;
    contentType?: unknown;
  };
  const fromProperty = (header: string, value: unknown) => {
    if (headers[header] === undefined && typeof value === 'string' && value) headers[header] = value;
  };
  fromProperty(MessageHeaders.ID, messageId);
  fromProperty(MessageHeaders.TYPE, type);
  fromProperty(MessageHeaders.CONTENT_TYPE, contentType);
  return headers;
}

function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}
