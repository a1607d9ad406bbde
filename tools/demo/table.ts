/** Renders rows as a boxed text table; the first row is the header. The first column aligns left, the rest right. */
export function renderTable(rows: readonly (readonly string[])[]): string {
  const widths = rows[0].map((_, col) => Math.max(...rows.map((row) => visibleLength(row[col] ?? ''))));
  const cell = (text: string, col: number) => {
    const pad = ' '.repeat(widths[col] - visibleLength(text));
    return col === 0 ? text + pad : pad + text;
  };
  const rule = (left: string, mid: string, right: string) =>
    left + widths.map((w) => '─'.repeat(w + 2)).join(mid) + right;
  const line = (row: readonly string[]) => `│ ${row.map((text, col) => cell(text ?? '', col)).join(' │ ')} │`;
  return [
    rule('┌', '┬', '┐'),
    line(rows[0]),
    rule('├', '┼', '┤'),
    ...rows.slice(1).map(line),
    rule('└', '┴', '┘'),
  ].join('\n');
}

const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

function stripAnsi(text: string): string {
  return text.replace(ANSI_COLOUR, '');
}

function visibleLength(text: string): number {
  return stripAnsi(text).length;
}
