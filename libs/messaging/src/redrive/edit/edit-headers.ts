import { MessageHeaders } from '../../envelope/message-headers';

/**
 * Headers nobody may edit: the library's own (`msg.*`: id, key, type, versions, redrive, failure, sealed
 * key, edit-of), the trace context, the content type, and a broker's `x-*` bookkeeping.
 */
const LOCKED = /^(msg\..*|traceparent|tracestate|content-type|x-.*)$/i;

/**
 * Why `name` may not be changed by an edit, or undefined when it may: it must not be locked, and the
 * redriven copy must carry it (the deployment's `carryHeaders`), else the edit would be silently dropped.
 */
export function lockedHeaderReason(name: string, carryHeaders: readonly string[]): string | undefined {
  if (name.length === 0 || name.length > 200 || !/^[\x21-\x7e]+$/.test(name)) {
    return `'${name.slice(0, 40)}' is not a header name`;
  }
  if (LOCKED.test(name)) return `${name} is locked (the library's, the trace's or the broker's)`;
  if (!carryHeaders.some((carried) => carried.toLowerCase() === name.toLowerCase())) {
    return `${name} is not among the headers a redriven copy carries (carryHeaders)`;
  }
  return undefined;
}

/** The reasons each header change of an edit is refused for; empty when every one is allowed. */
export function lockedHeaders(
  changes: Readonly<Record<string, string | null>>,
  carryHeaders: readonly string[],
): string[] {
  return Object.keys(changes)
    .map((name) => lockedHeaderReason(name, carryHeaders))
    .filter((reason): reason is string => reason !== undefined);
}

/**
 * `headers` with `changes` applied (a value set, null removed; names compared without case), and
 * `msg.edit-of` set to the original's fingerprint.
 */
export function applyHeaderChanges(
  headers: Readonly<Record<string, string>>,
  changes: Readonly<Record<string, string | null>>,
  editOf: string,
): Record<string, string> {
  const result = { ...headers };
  for (const [name, value] of Object.entries(changes)) {
    for (const present of Object.keys(result)) {
      if (present.toLowerCase() === name.toLowerCase()) delete result[present];
    }
    if (value !== null) result[name] = value;
  }
  result[MessageHeaders.EDIT_OF] = editOf;
  return result;
}
