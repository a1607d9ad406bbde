import { isMessageId } from '../../envelope/message-id';
import { NewOutboxRow } from '../outbox-row';

/** The version of the content format below; a relay refuses content of a version it does not know. */
const CONTENT_VERSION = 1;

/** The envelope part of a message's content: one line of JSON. */
interface ContentHeader {
  readonly v: number;
  readonly id: string;
  readonly d: string;
  readonly t: string;
  readonly k: string;
  readonly h: Record<string, string>;
  /** When the fact happened, ISO 8601. */
  readonly o: string;
}

/**
 * The content of an outbox message in the log (`pg_logical_emit_message`): the envelope as one line of JSON,
 * a newline, then the payload's JSON text as `OutboxService.add()` validated it. The relay reads the envelope
 * and hands the payload text to the broker without parsing it (JSON text has no raw newline in the header).
 */
export function encodeLogicalMessage(row: NewOutboxRow): string {
  const header: ContentHeader = {
    v: CONTENT_VERSION,
    id: row.messageId,
    d: row.destination,
    t: row.type,
    k: row.key,
    h: { ...row.headers },
    o: row.occurredAt.toISOString(),
  };
  return `${JSON.stringify(header)}\n${row.payloadJson}`;
}

/** A message read back from the log, or why it cannot be (content some other writer put under our prefix). */
export type DecodedLogicalMessage =
  { readonly ok: true; readonly row: NewOutboxRow } | { readonly ok: false; readonly reason: string };

/** Reads what `encodeLogicalMessage` wrote. Never throws. */
export function decodeLogicalMessage(content: Buffer): DecodedLogicalMessage {
  const text = content.toString('utf8');
  const newline = text.indexOf('\n');
  if (newline < 0) return failed('no envelope line');
  let header: Partial<ContentHeader>;
  try {
    header = JSON.parse(text.slice(0, newline)) as Partial<ContentHeader>;
  } catch {
    return failed('the envelope line is not JSON');
  }
  if (typeof header !== 'object' || header === null) return failed('the envelope line is not an object');
  if (header.v !== CONTENT_VERSION) return failed(`unknown content version ${String(header.v)}`);
  if (!isMessageId(header.id)) return failed('no message id');
  const occurredAt = typeof header.o === 'string' ? new Date(header.o) : new Date(Number.NaN);
  if (
    typeof header.d !== 'string' ||
    typeof header.t !== 'string' ||
    typeof header.k !== 'string' ||
    !isStringRecord(header.h) ||
    Number.isNaN(occurredAt.getTime())
  ) {
    return failed(`message ${header.id}: a field of the envelope is missing or of the wrong type`);
  }
  return {
    ok: true,
    row: {
      messageId: header.id,
      destination: header.d,
      type: header.t,
      key: header.k,
      headers: header.h,
      payloadJson: text.slice(newline + 1),
      occurredAt,
    },
  };
}

function failed(reason: string): DecodedLogicalMessage {
  return { ok: false, reason };
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => typeof v === 'string')
  );
}
