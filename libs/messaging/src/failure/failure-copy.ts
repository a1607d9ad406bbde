import { FailureCategory } from '../errors/failure-category';
import { MessageHeaders } from '../envelope/message-headers';
import { WireMessage } from '../envelope/wire-message';
import { carriedHeaders } from './carried-headers';
import { keyPseudonym, sealKey } from './key-pseudonym';
import { KeySecret } from './key-secret';

/** The headers a failure adds (the six of docs/guide/12-envelope.md, and a retry copy's due time). */
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

/** The six reserved failure headers (docs/guide/12-envelope.md), keeping the first failure's time across retries. */
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

/** What a dead-letter copy may keep besides the body and the failure headers. */
export interface DeadLetterCopyPolicy {
  /** The deployment's key secret: the key becomes its HMAC pseudonym, and is sealed for a redrive. */
  readonly keySecret: KeySecret;
  /** Header names carried besides the library's own (compared without case). Default: none. */
  readonly carryHeaders: readonly string[];
}

/**
 * The copy of a message for its dead-letter destination (the DLQ is kept longer and read by more people than
 * the original): the original body and message id, only allowlisted headers, the failure headers, and the key
 * replaced by its keyed pseudonym, which still groups one key's messages. The real key travels sealed
 * (`msg.sealed-key`), so that only a redrive holding the key secret can restore it.
 */
export function deadLetterCopy(
  source: WireMessage,
  destination: string,
  failure: Record<string, string>,
  policy: DeadLetterCopyPolicy,
): WireMessage {
  const headers: Record<string, string> = { ...carriedHeaders(source.headers, policy.carryHeaders) };
  for (const name of FAILURE_HEADER_NAMES) delete headers[name];
  let key: string | null = null;
  if (source.key !== null) {
    key = keyPseudonym(source.key, policy.keySecret);
    headers[MessageHeaders.SEALED_KEY] = sealKey(source.key, key, policy.keySecret);
  }
  return { destination, key, headers: { ...headers, ...failure }, body: source.body };
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

/** The headers without any of `FAILURE_HEADER_NAMES`. */
export function withoutFailureHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!FAILURE_HEADER_NAMES.includes(name)) kept[name] = value;
  }
  return kept;
}
