/**
 * `npm run lint:package`: "Are the types wrong?" (attw) on the package as `npm pack` makes it, from the build
 * `npm run lint` just made (`attw --pack` would run `prepack`, rebuilding and emptying `dist/` while the other
 * checks read it).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const LIBRARY_DIR = path.resolve(__dirname, '..', '..', 'libs', 'messaging');

const dir = mkdtempSync(path.join(os.tmpdir(), 'attw-'));
try {
  const packed = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
    cwd: LIBRARY_DIR,
    encoding: 'utf8',
  });
  const tarball = path.join(dir, (JSON.parse(packed) as Array<{ filename: string }>)[0].filename);
  execFileSync('attw', [tarball, '--quiet'], { stdio: 'inherit' });
} catch (error) {
  process.exitCode = 1;
  if (!(error instanceof Error && 'status' in error)) throw error;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
