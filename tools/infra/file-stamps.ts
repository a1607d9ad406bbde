import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/** The newest modification time of any file under `dir`, ms since the epoch (0 for an empty folder). */
export async function newestMtime(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, await newestMtime(full));
    else newest = Math.max(newest, (await fs.stat(full)).mtimeMs);
  }
  return newest;
}

/**
 * Takes a lock folder (mkdir is atomic) and resolves with its release. A lock older than ten minutes is
 * taken to be left over from a crash.
 */
export async function lockFolder(dir: string): Promise<() => Promise<void>> {
  for (;;) {
    try {
      await fs.mkdir(dir);
      return () => fs.rm(dir, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = Date.now() - ((await fs.stat(dir).catch(() => undefined))?.mtimeMs ?? Date.now());
      if (age > 600_000) await fs.rm(dir, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
