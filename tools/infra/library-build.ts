import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { lockFolder, newestMtime } from './file-stamps';

const run = promisify(execFile);

/** The library package's folder. */
export const LIBRARY_DIR = path.resolve(__dirname, '..', '..', 'libs', 'messaging');

/**
 * Builds the library package (`libs/messaging/dist`, what `nest-reliable-messaging` resolves to) unless
 * the build is newer than its sources; resolves with whether it built. Concurrent callers take turns.
 */
export async function buildLibrary(): Promise<boolean> {
  const stamp = path.join(LIBRARY_DIR, 'dist', 'index.js'); // tsc writes every file on each build
  const release = await lockFolder(path.join(LIBRARY_DIR, '.build.lock'));
  try {
    const builtAt = (await fs.stat(stamp).catch(() => undefined))?.mtimeMs ?? 0;
    const inputs = await Promise.all([
      newestMtime(path.join(LIBRARY_DIR, 'src')),
      ...['package.json', 'tsconfig.build.json'].map(
        async (f) => (await fs.stat(path.join(LIBRARY_DIR, f))).mtimeMs,
      ),
      fs.stat(path.resolve(LIBRARY_DIR, '..', '..', 'tsconfig.json')).then((s) => s.mtimeMs),
    ]);
    if (builtAt > Math.max(...inputs)) return false;
    await run('npm', ['run', '-s', 'build'], { cwd: LIBRARY_DIR, maxBuffer: 16 * 1024 * 1024 }).catch(
      (error) => {
        const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
        throw new Error(`Building the library failed:\n${`${stdout}\n${stderr}`.trim()}`);
      },
    );
    return true;
  } finally {
    await release();
  }
}
