/** Control characters (C0, DEL, C1) and bidi controls: they can move the cursor or disguise text. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** True when `text` holds a control character (or a bidi control). */
export function hasUnprintable(text: string): boolean {
  UNPRINTABLE.lastIndex = 0;
  return UNPRINTABLE.test(text);
}

/**
 * Text from a dead-letter record (or any other untrusted source) made safe for an approver's terminal:
 * each control character becomes a visible `\u{…}` escape, so an escape sequence cannot clear the screen,
 * rewrite a line or hide what is approved.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}
