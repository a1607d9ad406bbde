import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { CliIo } from './cli-io';
import { CliUsageError } from './cli-usage.error';

/**
 * Reads an approver's private key file (`dlq approve --key`) as JSON, as ssh reads a private key: a file
 * that its group or others may read or write, or that another user owns, is refused (issue 45, finding 14),
 * with the command that fixes it. The mode and owner are those of the file opened, not of a name looked up
 * before. `uid` is the current user's (default `process.getuid()`; not checked where there is none, e.g.
 * Windows).
 */
export async function readApproverKeyFile(
  io: CliIo,
  file: string,
  uid: number | undefined = process.getuid?.(),
): Promise<unknown> {
  const handle = await fs.open(path.resolve(io.cwd, file), 'r');
  try {
    if (uid !== undefined) {
      const stat = await handle.stat();
      if (stat.uid !== uid) {
        throw new CliUsageError(
          `The approver key ${file} is owned by another user (uid ${stat.uid}): an approver key must be your own ` +
            `file. Copy it as yourself (or chown it to you) and run: chmod 600 ${file}`,
        );
      }
      if ((stat.mode & 0o077) !== 0) {
        const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
        throw new CliUsageError(
          `The approver key ${file} is readable or writable by others (mode ${mode}): run chmod 600 ${file}`,
        );
      }
    }
    return JSON.parse(await handle.readFile('utf8')) as unknown;
  } finally {
    await handle.close();
  }
}
