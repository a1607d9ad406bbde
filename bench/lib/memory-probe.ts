import { existsSync, mkdtempSync, promises as fs, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { sleep } from './time';

/** `process.memoryUsage()` of a service after a full garbage collection, in bytes. */
export interface MemorySample {
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly arrayBuffers: number;
}

/**
 * Code each service process loads first (`NODE_OPTIONS=--require …`): on SIGWINCH (a signal Nest's shutdown hooks do not listen to, unlike SIGUSR2) it runs a full garbage
 * collection and writes `process.memoryUsage()` to `<dir>/<pid>.json`. Nothing of the service changes: the
 * bench reads the figures of the very processes the demo runs, without an endpoint in the apps.
 */
const PRELOAD = `'use strict';
const fs = require('node:fs');
const path = require('node:path');
const v8 = require('node:v8');
const vm = require('node:vm');
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const dir = process.env.BENCH_MEMORY_DIR;
process.on('SIGWINCH', () => {
  gc();
  gc();
  const file = path.join(dir, process.pid + '.json');
  fs.writeFileSync(file + '.tmp', JSON.stringify(process.memoryUsage()));
  fs.renameSync(file + '.tmp', file);
});
`;

/** Where the services' samples land, and the environment that makes them report. */
export class MemoryProbe {
  private readonly dir = mkdtempSync(path.join(os.tmpdir(), 'bench-memory-'));

  constructor() {
    writeFileSync(path.join(this.dir, 'preload.js'), PRELOAD);
  }

  /** Environment for a service process: loads the reporter before the service's own code. */
  get env(): Record<string, string> {
    return {
      NODE_OPTIONS: `--require ${path.join(this.dir, 'preload.js')}`,
      BENCH_MEMORY_DIR: this.dir,
    };
  }

  /** Asks process `pid` for a sample (after a full GC) and waits for it. */
  async sample(pid: number, timeoutMs = 30_000): Promise<MemorySample> {
    const file = path.join(this.dir, `${pid}.json`);
    rmSync(file, { force: true });
    process.kill(pid, 'SIGWINCH');
    const deadline = Date.now() + timeoutMs;
    while (!existsSync(file)) {
      if (Date.now() > deadline)
        throw new Error(`process ${pid} wrote no memory sample within ${timeoutMs} ms`);
      await sleep(50);
    }
    return JSON.parse(await fs.readFile(file, 'utf8')) as MemorySample;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
