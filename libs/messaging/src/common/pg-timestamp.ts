/** PostgreSQL's text for a `timestamptz` (DateStyle ISO): date, time, up to six fraction digits, UTC offset. */
const TIMESTAMPTZ_TEXT =
  /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?)$/;

/**
 * A `timestamptz` value read through pg, as a `Date` to the millisecond (truncated, as pg's own parser does),
 * whatever pg's type parser gives: a `Date` by default, or PostgreSQL's text when the application replaced
 * that parser (pg's parsers are global to the process; some applications read `timestamptz` as text to keep
 * microseconds or to use a date library). Throws a `TypeError` for anything else.
 */
export function pgTimestamp(value: unknown): Date {
  if (value instanceof Date) return value;
  const match = typeof value === 'string' ? TIMESTAMPTZ_TEXT.exec(value) : null;
  if (!match) throw new TypeError(`Not a timestamptz value: ${String(value).slice(0, 40)}`);
  const [, year, month, day, hour, minute, second, fraction = '', utc, sign, oh = '0', om = '0', os = '0'] =
    match;
  const offsetMs = utc ? 0 : (sign === '-' ? -1 : 1) * (+oh * 3_600_000 + +om * 60_000 + +os * 1_000);
  const date = new Date(0);
  date.setUTCFullYear(+year, +month - 1, +day);
  date.setUTCHours(+hour, +minute, +second, +fraction.padEnd(3, '0').slice(0, 3));
  return new Date(date.getTime() - offsetMs);
}
