import { Clock, systemClock } from '../common/clock';
import { FailureCategory } from '../errors/failure-category';
import { ENVELOPE_VERSION, MessageEnvelope } from './message-envelope';
import { JSON_CONTENT_TYPE, MessageHeaders } from './message-headers';
import { isMessageId } from './message-id';
import { eventVersionHeader, eventVersionOf } from './event-version';
import { WireMessage } from './wire-message';

/** Why a wire message could not be turned into an envelope. Codes are safe to put in a DLQ header. */
export interface DecodeFailure {
  readonly category: FailureCategory;
  readonly code:
    | 'MISSING_MESSAGE_ID'
    | 'MISSING_TYPE'
    | 'UNSUPPORTED_ENVELOPE_VERSION'
    | 'UNSUPPORTED_CONTENT_TYPE'
    | 'INVALID_JSON'
    | 'INVALID_OCCURRED_AT'
    | 'INVALID_EVENT_VERSION';
  /** The message id, when the headers carried a valid one (for logs and the DLQ). */
  readonly messageId?: string;
}

export type DecodeResult = { ok: true; envelope: MessageEnvelope } | { ok: false; failure: DecodeFailure };

const RESERVED_PREFIX = 'msg.';
/** A date and time with a zone, as `Date.prototype.toISOString()` writes it (fraction optional). */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Encodes an envelope for the wire (envelope version 1, binary mode). `payloadJson` lets the relay pass the
 * JSON text it read from the outbox without parsing and serialising it again. The event version is
 * `eventVersion`, else the `msg.event-version` an outbox row's headers carry (`OutboxService.add()` writes it
 * there), written when above 1 and valid; every other `msg.*` header is dropped.
 */
export function encodeEnvelope(envelope: Omit<MessageEnvelope, 'payload'>, payloadJson: string): WireMessage {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(envelope.headers)) {
    if (!name.startsWith(RESERVED_PREFIX)) headers[name] = value;
  }
  headers[MessageHeaders.ID] = envelope.messageId;
  headers[MessageHeaders.TYPE] = envelope.type;
  headers[MessageHeaders.OCCURRED_AT] = envelope.occurredAt.toISOString();
  const version = envelope.eventVersion ?? eventVersionOf(envelope.headers[MessageHeaders.EVENT_VERSION]);
  Object.assign(headers, eventVersionHeader(version));
  headers[MessageHeaders.ENVELOPE_VERSION] = ENVELOPE_VERSION;
  headers[MessageHeaders.CONTENT_TYPE] = JSON_CONTENT_TYPE;
  return {
    destination: envelope.destination,
    key: envelope.key,
    headers,
    body: Buffer.from(payloadJson, 'utf8'),
  };
}

/**
 * Decodes a wire message. Never throws: a bad message becomes a classified failure so that the consumer
 * can dead-letter it and go on. A message without `msg.occurred-at` is dated `clock.now()`.
 */
export function decodeEnvelope(wire: WireMessage, clock: Pick<Clock, 'now'> = systemClock): DecodeResult {
  const h = wire.headers;
  const messageId = h[MessageHeaders.ID];
  if (!isMessageId(messageId)) return fail('MISSING_MESSAGE_ID');
  const failWithId = (code: DecodeFailure['code']): DecodeResult => fail(code, messageId);

  const type = h[MessageHeaders.TYPE];
  if (!type) return failWithId('MISSING_TYPE');
  const version = h[MessageHeaders.ENVELOPE_VERSION];
  if (version !== undefined && version !== ENVELOPE_VERSION)
    return failWithId('UNSUPPORTED_ENVELOPE_VERSION');
  const contentType = h[MessageHeaders.CONTENT_TYPE];
  if (contentType !== undefined && contentType.split(';')[0].trim().toLowerCase() !== JSON_CONTENT_TYPE) {
    return failWithId('UNSUPPORTED_CONTENT_TYPE');
  }
  const occurredAtText = h[MessageHeaders.OCCURRED_AT];
  if (occurredAtText !== undefined && !ISO_8601.test(occurredAtText))
    return failWithId('INVALID_OCCURRED_AT');
  const occurredAt = occurredAtText === undefined ? new Date(clock.now()) : new Date(occurredAtText);
  if (Number.isNaN(occurredAt.getTime())) return failWithId('INVALID_OCCURRED_AT');
  const eventVersion = eventVersionOf(h[MessageHeaders.EVENT_VERSION]);
  if (eventVersion === undefined) return failWithId('INVALID_EVENT_VERSION');

  let payload: unknown;
  try {
    payload = JSON.parse(wire.body.toString('utf8'));
  } catch {
    return failWithId('INVALID_JSON');
  }

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(h)) {
    if (!name.startsWith(RESERVED_PREFIX) && name !== MessageHeaders.CONTENT_TYPE) headers[name] = value;
  }
  const key = wire.key ?? h[MessageHeaders.KEY] ?? '';
  return {
    ok: true,
    envelope: {
      messageId,
      type,
      destination: wire.destination,
      key,
      occurredAt,
      eventVersion,
      headers,
      payload,
    },
  };
}

function fail(code: DecodeFailure['code'], messageId?: string): DecodeResult {
  return { ok: false, failure: { category: FailureCategory.DESERIALIZATION, code, messageId } };
}
