/**
 * What a terminal or a reader's eye must not get raw: control characters (C0, DEL, C1), format characters
 * (bidirectional controls, zero-width characters, soft hyphens, tags, byte-order marks), line and paragraph
 * separators, lone surrogates, and the Hangul fillers that render as blanks. They can move the cursor, clear
 * the screen, reorder a line or make two different names look the same.
 */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u115f\u1160\u3164\uffa0]/gu;

/** True when `text` holds a character `printable()` would escape. */
export function hasUnprintable(text: string): boolean {
  UNPRINTABLE.lastIndex = 0;
  return UNPRINTABLE.test(text);
}

/**
 * Text from a dead-letter record (or any other untrusted source) made safe for an approver's terminal:
 * each such character becomes a visible `\u{…}` escape, so an escape sequence cannot clear the screen,
 * rewrite a line or hide what is approved, and an invisible character cannot disguise a name.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

/** `printable()` for several lines: the line feeds between them stay, everything else is escaped. */
export function printableLines(text: string): string {
  return text.split('\n').map(printable).join('\n');
}

/**
 * `printable()` that keeps a text's layout: tabs and line feeds stay (a payload in a `<pre>`), every other
 * character `printable()` escapes is escaped. For HTML text, where those two cannot reorder or hide anything.
 */
export function printableKeepingLayout(text: string): string {
  return text.replace(UNPRINTABLE, (c) =>
    c === '\n' || c === '\t' ? c : `\\u{${c.codePointAt(0)!.toString(16)}}`,
  );
}
