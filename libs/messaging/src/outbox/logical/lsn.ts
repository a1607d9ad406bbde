/** A position in PostgreSQL's write-ahead log (an LSN), as a 64-bit unsigned integer. */
export type Lsn = bigint;

/** Parses PostgreSQL's text form of an LSN, `16/B374D848` (two hexadecimal halves). */
export function parseLsn(text: string): Lsn {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text.trim());
  if (!match) throw new TypeError(`Not a WAL position (LSN): '${text}'.`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** PostgreSQL's text form of an LSN, `16/B374D848`. */
export function formatLsn(lsn: Lsn): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}
