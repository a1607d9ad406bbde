/**
 * How much of a dead letter's headers a view holds and shows: a DLQ writer chooses them, and a header bomb
 * (thousands of entries, or values of megabytes) must not render as an enormous table (issue 45, finding 7).
 */
export const HeaderDisplayLimits = {
  /** At most this many headers are shown; the library's own (`msg.*`) first. */
  MAX_HEADERS: 64,
  /** A longer name or value is cut here, characters, and marked. */
  MAX_TEXT_CHARS: 1_024,
  /** The headers shown hold at most this many characters together, names and values. */
  MAX_TOTAL_CHARS: 16 * 1_024,
} as const;

/** The headers a view shows, and how many it leaves out. */
export interface ShownHeaders {
  readonly headers: Record<string, string>;
  /** Headers left out: beyond `MAX_HEADERS` or `MAX_TOTAL_CHARS`. */
  readonly notShown: number;
}

/** The headers to show of `all`, the library's (`msg.*`) first, long texts cut and marked with their length. */
export function shownHeaders(all: Readonly<Record<string, string>>): ShownHeaders {
  const entries = Object.entries(all);
  const ordered = [
    ...entries.filter(([name]) => name.startsWith('msg.')),
    ...entries.filter(([name]) => !name.startsWith('msg.')),
  ];
  const headers: Record<string, string> = {};
  let shown = 0;
  let chars = 0;
  for (const [name, value] of ordered) {
    const [shortName, shortValue] = [cut(name), cut(value)];
    if (shown >= HeaderDisplayLimits.MAX_HEADERS) break;
    if (chars + shortName.length + shortValue.length > HeaderDisplayLimits.MAX_TOTAL_CHARS) break;
    headers[shortName] = shortValue;
    shown += 1;
    chars += shortName.length + shortValue.length;
  }
  return { headers, notShown: entries.length - shown };
}

function cut(text: string): string {
  const max = HeaderDisplayLimits.MAX_TEXT_CHARS;
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}
