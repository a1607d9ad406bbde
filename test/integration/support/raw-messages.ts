import { encodeEnvelope, WireMessage } from 'nest-reliable-messaging/testing';
import { newMessageId } from 'nest-reliable-messaging';

/** A well-formed message for an order, as the library's relay would put it on the wire. */
export function orderMessage(
  destination: string,
  order: { customer: string; seq: number; amount?: number; orderId?: number },
  messageId: string = newMessageId(),
): WireMessage {
  const payload = {
    orderId: order.orderId ?? order.seq,
    customer: order.customer,
    amount: order.amount ?? 1,
    seq: order.seq,
  };
  return encodeEnvelope(
    { messageId, type: 'OrderPlaced', destination, key: order.customer, occurredAt: new Date(), headers: {} },
    JSON.stringify(payload),
  );
}

/** The same message with some headers replaced or removed (undefined removes). */
export function withHeaders(message: WireMessage, headers: Record<string, string | undefined>): WireMessage {
  const next: Record<string, string> = { ...message.headers };
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) delete next[name];
    else next[name] = value;
  }
  return { ...message, headers: next };
}

export function withBody(message: WireMessage, body: string): WireMessage {
  return { ...message, body: Buffer.from(body) };
}
