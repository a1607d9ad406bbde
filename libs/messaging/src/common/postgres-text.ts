/** The escapes `toPostgresText` writes. */
const ESCAPED = /\\u\{(0|5c)\}/g;

/**
 * `text` as the admin database keeps it. PostgreSQL refuses U+0000 in `text` and `jsonb`, so a dead-letter
 * message whose id holds one could be neither recorded in the audit log nor kept in the console's plan store,
 * and so never planned, redriven or discarded (issue 45, finding 14). Each NUL is written `\u{0}` (as
 * `printable()` shows it) and, so that `fromPostgresText` gives back exactly what was written (a plan must
 * still match its hash), a backslash that starts `\u{` is written `\u{5c}`. Nothing else changes.
 */
export function toPostgresText(text: string): string {
  // Backslashes first: the escapes written for NULs are not to be escaped again.
  return text.replaceAll('\\u{', '\\u{5c}u{').replaceAll('\u0000', '\\u{0}');
}

/** The text `toPostgresText` was given. */
export function fromPostgresText(stored: string): string {
  return stored.replace(ESCAPED, (_, code: string) => (code === '0' ? '\u0000' : '\\'));
}

/** `value` as JSON for a `jsonb` column, every string in it (keys too) through `toPostgresText`. */
export function toPostgresJson(value: unknown): string {
  return JSON.stringify(mapStrings(value, toPostgresText));
}

/** A `jsonb` value as read, every string in it (keys too) through `fromPostgresText`. */
export function fromPostgresJson(value: unknown): unknown {
  return mapStrings(value, fromPostgresText);
}

function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) return value.map((item: unknown) => mapStrings(item, map));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [map(key), mapStrings(item, map)]));
  }
  return value;
}
