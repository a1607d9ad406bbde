import { MessageHeaders } from '../envelope/message-headers';

/**
 * Headers of the library's own that a dead-letter copy keeps: the envelope's, the trace context and a
 * redrive's history. The failure headers are added afresh; `msg.key` never travels (the key is replaced).
 */
export const LIBRARY_CARRIED_HEADERS: readonly string[] = [
  MessageHeaders.ID,
  MessageHeaders.TYPE,
  MessageHeaders.OCCURRED_AT,
  MessageHeaders.ENVELOPE_VERSION,
  MessageHeaders.EVENT_VERSION,
  MessageHeaders.CONTENT_TYPE,
  MessageHeaders.TRACEPARENT,
  MessageHeaders.TRACESTATE,
  MessageHeaders.REDRIVE_ID,
  MessageHeaders.REDRIVE_COUNT,
  MessageHeaders.REDRIVE_HISTORY,
  MessageHeaders.TENANT,
  MessageHeaders.TENANT_SIGNATURE,
  MessageHeaders.EDIT_OF,
];

/**
 * The headers a dead-letter copy keeps: an allowlist (ours plus `extra`, compared without case), never a
 * denylist, since a denylist always misses some name (`x-auth`, `x-csrf`, `passphrase`, `dsn`...).
 */
export function carriedHeaders(
  headers: Readonly<Record<string, string>>,
  extra: readonly string[],
): Record<string, string> {
  const allowed = new Set([...LIBRARY_CARRIED_HEADERS, ...extra].map((name) => name.toLowerCase()));
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (allowed.has(name.toLowerCase())) kept[name] = value;
  }
  return kept;
}
