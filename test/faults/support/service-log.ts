import { promises as fs } from 'node:fs';
import { sleep } from '../../../tools/demo/blog-scenario';

/**
 * Reading a service's log file (stdout and stderr of every run of the process, appended): Node writes to a
 * file synchronously, so a line logged before a SIGKILL is in the file.
 */

/** Lines of `file` after byte `offset` that match `pattern`. */
export async function logLinesSince(file: string, offset: number, pattern: RegExp): Promise<string[]> {
  const handle = await fs.open(file, 'r').catch(() => undefined);
  if (!handle) return [];
  let text: Buffer;
  try {
    const { size } = await handle.stat();
    text = Buffer.alloc(Math.max(0, size - offset));
    if (text.length > 0) await handle.read(text, 0, text.length, offset);
  } finally {
    await handle.close();
  }
  return text
    .toString('utf8')
    .split('\n')
    .filter((line) => pattern.test(line));
}

/** Lines of the whole file that match `pattern`. */
export function logLines(file: string, pattern: RegExp): Promise<string[]> {
  return logLinesSince(file, 0, pattern);
}

/** Polls until a line after `offset` matches; false after `timeoutMs`. */
export async function waitForLogLine(
  file: string,
  offset: number,
  pattern: RegExp,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let size = offset;
  for (;;) {
    // A cheap stat while nothing is written; the file is read only when it grew.
    const now = (await fs.stat(file).catch(() => ({ size: 0 }))).size;
    if (now > size && (await logLinesSince(file, offset, pattern)).length > 0) return true;
    size = now;
    if (Date.now() >= deadline) return false;
    await sleep(2);
  }
}
