import { printable } from '../../common/printable';

/**
 * Lays rows out in left-aligned columns, two spaces apart, with a header row. Cells are made printable:
 * they often come from dead-letter records, which anyone who can write the DLQ can fill.
 */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const safe = rows.map((row) => row.map(printable));
  const widths = header.map((h, i) => Math.max(h.length, ...safe.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(header), ...safe.map(line)];
}
