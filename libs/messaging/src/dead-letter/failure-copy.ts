import { createHash } from 'node:crypto';
import { FailureCategory } from '../envelope/failure-category';
import { MessageHeaders } from '../envelope/message-headers';
import { WireMessage } from '../envelope/wire-message';

/** Header names whose values may be credentials: never copied to a dead-letter destination. */
const SECRET_HEADER =
  /authorization|cookie|token|secret|passw|(api|private|access|signing)[-_.]?key|credential|session|signature|jwt|bearer/i;

/** The headers a failure adds (the six of spec §3, and a retry copy's due time). */
export const FAILURE_HEADER_NAMES: readonly string[] = [
  MessageHeaders.FAILURE_CATEGORY,
  MessageHeaders.FAILURE_CODE,
  MessageHeaders.ORIGIN_DESTINATION,
  MessageHeaders.RETRY_ATTEMPT,
  MessageHeaders.FIRST_FAILURE_AT,
  MessageHeaders.LAST_FAILURE_AT,
  MessageHeaders.RETRY_DUE_AT,
];

/** What the spec allows a failed message to carry about its failure: these six headers and nothing else. */
export interface FailureFacts {
  readonly category: FailureCategory;
  /** A short machine-readable code (never an exception message). */
  readonly code: string;
  readonly originDestination: string;
  /** Deliveries that failed so far. */
  readonly attempt: number;
  readonly now: Date;
}

/** The six reserved failure headers (spec §3), keeping the first failure's time across retries. */
export function failureHeaders(
  facts: FailureFacts,
  incoming: Readonly<Record<string, string>>,
): Record<string, string> {
  return {
    [MessageHeaders.FAILURE_CATEGORY]: facts.category,
    [MessageHeaders.FAILURE_CODE]: facts.code,
    [MessageHeaders.ORIGIN_DESTINATION]: facts.originDestination,
    [MessageHeaders.RETRY_ATTEMPT]: String(facts.attempt),
    [MessageHeaders.FIRST_FAILURE_AT]: incoming[MessageHeaders.FIRST_FAILURE_AT] ?? facts.now.toISOString(),
    [MessageHeaders.LAST_FAILURE_AT]: facts.now.toISOString(),
  };
}

/**
 * The copy of a message for its dead-letter destination: the original body and message id, the envelope
 * headers minus any that may hold secrets, the failure headers, and the key replaced by its SHA-256 (the DLQ
 * is kept longer and read by more people than the original; a hashed key still groups one key's messages).
 */
export function deadLetterCopy(
  source: WireMessage,
  destination: string,
  failure: Record<string, string>,
): WireMessage {
  return {
    destination,
    key: source.key === null ? null : pseudonymousKey(source.key),
    headers: { ...carriedHeaders(source.headers), ...failure },
    body: source.body,
  };
}

/** The copy of a message for a retry destination: everything kept, plus the failure headers and the due time. */
export function retryCopy(
  source: WireMessage,
  destination: string,
  failure: Record<string, string>,
  dueAt: Date,
): WireMessage {
  return {
    destination,
    key: source.key,
    headers: {
      ...withoutFailureHeaders(source.headers),
      ...failure,
      [MessageHeaders.RETRY_DUE_AT]: dueAt.toISOString(),
    },
    body: source.body,
  };
}

/** A stable stand-in for a key, so that a DLQ does not hold real keys. */
export function pseudonymousKey(key: string): string {
  return `sha256:${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
}

function carriedHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(withoutFailureHeaders(headers))) {
    if (!SECRET_HEADER.test(name) && name !== MessageHeaders.KEY) kept[name] = value;
  }
  return kept;
}

/** The headers without any of `FAILURE_HEADER_NAMES`. */
export function withoutFailureHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!FAILURE_HEADER_NAMES.includes(name)) kept[name] = value;
  }
  return kept;
}
