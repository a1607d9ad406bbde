import { execFile } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { buildLibrary } from '../infra/library-build';
import { lockFolder, newestMtime } from '../infra/file-stamps';

const run = promisify(execFile);

/** The repository's root folder. */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** The demo services, by their folder under `apps/`. */
export const SERVICES = ['post-service', 'subscribe-service'] as const;
export type ServiceName = (typeof SERVICES)[number];
/** The apps the build compiles: the services and the operations console. */
export type AppName = ServiceName | 'ops-console';

/** Compiled services, ready for `node <entry>`. */
export interface BuiltServices {
  readonly outDir: string;
  /** Wall time of the build, ms; 0 when the previous build was still fresh. */
  readonly elapsedMs: number;
  entry(app: AppName): string;
}

/** Options of `buildServices()`. */
export interface BuildOptions {
  /** Reuse the previous build in `buildDir` when no source file changed since. Default false. */
  reuseFresh?: boolean;
}

/**
 * Builds the library package if its sources changed (the services load it from node_modules, as users'
 * applications do), then compiles both services with the Nest CLI's tsc builder (decorator metadata;
 * `@app/*` imports rewritten to relative paths) in one program, into `buildDir` rather than `dist/`, so that a demo or test run never
 * deletes the files of another one (or of `npm run build`) from under running processes.
 * Concurrent callers on one folder take turns through a lock folder.
 */
export async function buildServices(buildDir: string, options: BuildOptions = {}): Promise<BuiltServices> {
  const started = Date.now();
  const stamp = path.join(buildDir, 'dist', '.built');
  const built = (elapsedMs: number) => builtServicesAt(buildDir, elapsedMs);

  await buildLibrary();
  await fs.mkdir(buildDir, { recursive: true });
  const release = await lockFolder(`${buildDir}.lock`);
  try {
    if (options.reuseFresh && (await isFresh(stamp))) return built(0);
    const tsconfig = path.join(buildDir, 'tsconfig.json');
    const rel = (p: string) => path.relative(buildDir, path.join(REPO_ROOT, p)).split(path.sep).join('/');
    await fs.writeFile(
      tsconfig,
      `${JSON.stringify(
        {
          extends: rel('tsconfig.build.json'),
          compilerOptions: { outDir: './dist', declaration: false },
          // The apps; the monorepo libraries they import (contracts, service-kit) come with them.
          include: [rel('apps/*/src/**/*')],
          exclude: [rel('**/*.spec.ts')],
        },
        null,
        2,
      )}\n`,
    );
    try {
      // The CLI joins `-p` to the working directory: give it a relative path.
      const project = path.relative(REPO_ROOT, tsconfig);
      await run(process.execPath, [require.resolve('@nestjs/cli/bin/nest.js'), 'build', '-p', project], {
        cwd: REPO_ROOT,
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, NO_COLOR: '1' },
      });
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      throw new Error(`Building the services failed:\n${`${stdout}\n${stderr}`.trim()}`);
    }
    for (const service of SERVICES) {
      if (!existsSync(built(0).entry(service)))
        throw new Error(`The build produced no ${built(0).entry(service)}.`);
    }
    await fs.writeFile(stamp, `${new Date().toISOString()}\n`);
    return built(Date.now() - started);
  } finally {
    await release();
  }
}

/** The services `buildServices(buildDir)` compiled earlier (e.g. in a test run's global setup). */
export function builtServicesAt(buildDir: string, elapsedMs = 0): BuiltServices {
  const outDir = path.join(buildDir, 'dist');
  return { outDir, elapsedMs, entry: (service) => path.join(outDir, 'apps', service, 'src', 'main.js') };
}

/** True when the stamp is newer than every source and configuration file the build reads. */
async function isFresh(stamp: string): Promise<boolean> {
  const builtAt = (await fs.stat(stamp).catch(() => undefined))?.mtimeMs;
  if (builtAt === undefined) return false;
  const inputs = ['tsconfig.json', 'tsconfig.build.json', 'nest-cli.json', 'package-lock.json'];
  for (const file of inputs) {
    if (((await fs.stat(path.join(REPO_ROOT, file)).catch(() => undefined))?.mtimeMs ?? 0) > builtAt)
      return false;
  }
  // The library is not compiled into the services (they load the built package at run time).
  for (const dir of ['apps', 'libs/contracts', 'libs/service-kit']) {
    if ((await newestMtime(path.join(REPO_ROOT, dir))) > builtAt) return false;
  }
  return true;
}
