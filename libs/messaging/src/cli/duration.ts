const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** Parses a duration such as `90s`, `15m`, `1h` or `500ms` (a bare number is minutes) into ms. */
export function parseDuration(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(text);
  if (!match) throw new Error(`'${text}' is not a duration; write e.g. 15m, 1h or 90s.`);
  return Math.round(Number(match[1]) * UNITS[match[2] ?? 'm']);
}
