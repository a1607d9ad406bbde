/**
 * `npm run lint:package` (part of `npm run lint`): what `npm pack` would publish is only the build (with its
 * declarations and source maps), the README, LICENSE, CHANGELOG and package.json — no specs, no sources (and the bin shim) —
 * and how big it is.
 */
import { execFileSync } from 'node:child_process';
import { LIBRARY_DIR } from '../infra/library-build';

interface PackResult {
  readonly filename: string;
  readonly size: number;
  readonly unpackedSize: number;
  readonly files: ReadonlyArray<{ readonly path: string; readonly size: number }>;
}

const ALLOWED = [
  /^package\.json$/,
  /^README\.md$/,
  /^LICENSE$/,
  /^CHANGELOG\.md$/,
  /^dist\/.+\.(js|js\.map|d\.ts)$/,
  /^bin\/nest-messaging\.js$/,
];
const FORBIDDEN = [/\.spec\./, /\.test\./, /\.tsbuildinfo$/, /^dist\/\.api-extractor\//];
const REQUIRED = [
  'package.json',
  'README.md',
  'LICENSE',
  'CHANGELOG.md',
  'dist/index.js',
  'dist/index.d.ts',
  'dist/cli/main.js',
  'bin/nest-messaging.js',
];

const [pack] = JSON.parse(
  execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: LIBRARY_DIR,
    encoding: 'utf8',
  }),
) as PackResult[];
const paths = pack.files.map((file) => file.path);
const unexpected = paths.filter((p) => !ALLOWED.some((r) => r.test(p)) || FORBIDDEN.some((r) => r.test(p)));
const missing = REQUIRED.filter((p) => !paths.includes(p));
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
console.log(
  `${pack.filename}: ${paths.length} files, ${kib(pack.size)} packed, ${kib(pack.unpackedSize)} unpacked`,
);
if (unexpected.length > 0 || missing.length > 0) {
  if (unexpected.length > 0) console.error(`Not for the package:\n  ${unexpected.join('\n  ')}`);
  if (missing.length > 0) console.error(`Missing from the package:\n  ${missing.join('\n  ')}`);
  process.exit(1);
}
