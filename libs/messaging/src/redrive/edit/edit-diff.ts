import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json';
import { EditChange } from './message-edit';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON pointer segment (RFC 6901): `~` and `/` escaped. */
function segment(key: string | number): string {
  return String(key).replace(/~/g, '~0').replace(/\//g, '~1');
}

function isObject(value: Json): value is { [key: string]: Json } {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The changes from `before` to `after`, payload values compared structurally: objects key by key (sorted),
 * arrays index by index, anything else replaced whole. Values are JSON text, in full: what the approver signs.
 */
export function payloadDiff(before: Json, after: Json, path = ''): EditChange[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => {
      const at = `${path}/${segment(key)}`;
      if (!(key in after)) return [{ path: at, op: 'remove' as const, before: canonicalJson(before[key]) }];
      if (!(key in before)) return [{ path: at, op: 'add' as const, after: canonicalJson(after[key]) }];
      return payloadDiff(before[key], after[key], at);
    });
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const changes: EditChange[] = [];
    for (let i = 0; i < Math.max(before.length, after.length); i++) {
      const at = `${path}/${i}`;
      if (i >= after.length) changes.push({ path: at, op: 'remove', before: canonicalJson(before[i]) });
      else if (i >= before.length) changes.push({ path: at, op: 'add', after: canonicalJson(after[i]) });
      else changes.push(...payloadDiff(before[i], after[i], at));
    }
    return changes;
  }
  if (canonicalJson(before) === canonicalJson(after)) return [];
  return [{ path, op: 'replace', before: canonicalJson(before), after: canonicalJson(after) }];
}

/**
 * The diff of a payload that was not JSON (it failed decoding): one replacement of the whole payload, the
 * old text as a JSON string.
 */
export function wholePayloadDiff(beforeText: string, after: Json): EditChange[] {
  return [{ path: '', op: 'replace', before: JSON.stringify(beforeText), after: canonicalJson(after) }];
}

/** The header changes against the original headers, sorted by name; setting a header to its value is no change. */
export function headerDiff(
  original: Readonly<Record<string, string>>,
  changes: Readonly<Record<string, string | null>>,
): EditChange[] {
  const valueOf = (name: string) =>
    Object.entries(original).find(([present]) => present.toLowerCase() === name.toLowerCase())?.[1];
  return Object.keys(changes)
    .sort()
    .flatMap((name): EditChange[] => {
      const before = valueOf(name);
      const after = changes[name];
      const path = `header:${name}`;
      if (after === null) return before === undefined ? [] : [{ path, op: 'remove', before }];
      if (before === undefined) return [{ path, op: 'add', after }];
      return before === after ? [] : [{ path, op: 'replace', before, after }];
    });
}

/** `sha256:` of an edit's diff, bound to the message it edits: what the audit log keeps of an edit. */
export function diffHashOf(messageId: string, fingerprint: string, diff: readonly EditChange[]): string {
  const digest = createHash('sha256').update(canonicalJson({ messageId, fingerprint, diff })).digest('hex');
  return `sha256:${digest}`;
}
