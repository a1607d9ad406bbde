import { readFileSync } from 'node:fs';

/**
 * The entries of a `.properties` file as Kafka Connect reads them: `key=value` lines, `#` and `!` comments,
 * blank lines; `\` escapes (`\\`, `\n`, `\t`, `\=`) in keys and values. No continuation lines.
 */
export function readProperties(file: string): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const separator = /(?<!\\)=/.exec(line);
    if (!separator) throw new Error(`${file}: not a key=value line: ${line}`);
    entries[unescape(line.slice(0, separator.index).trim())] = unescape(
      line.slice(separator.index + 1).trim(),
    );
  }
  return entries;
}

/** A `.properties` file's text (values escaped as `java.util.Properties` reads them). */
export function writeProperties(entries: Readonly<Record<string, string>>): string {
  const escape = (text: string) =>
    text
      .replace(/\\/g, '\\\\')
      .replace(/\n/g, '\\n')
      .replace(/^\s/, (s) => `\\${s}`);
  return `${Object.entries(entries)
    .map(([key, value]) => `${key.replace(/[=:\s\\]/g, (c) => `\\${c}`)}=${escape(value)}`)
    .join('\n')}\n`;
}

function unescape(text: string): string {
  return text.replace(/\\(.)/g, (_all, c: string) => ({ n: '\n', t: '\t', r: '\r' })[c] ?? c);
}
