import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Clock } from '../common/clock';

/** What the CLI reads and writes besides the broker: injectable, so tests run it in-process. */
export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Writes to standard output. */
  out(text: string): void;
  /** Writes to standard error. */
  err(text: string): void;
  /** Relative file names are resolved against this folder. */
  readonly cwd: string;
  /** The clock approvals are issued and checked against. Default: the system clock. */
  readonly now?: () => Date;
}

/** The process's own environment, streams and folder. */
export function processIo(): CliIo {
  return {
    env: process.env,
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    cwd: process.cwd(),
  };
}

/** Reads a JSON file. */
export async function readJson(io: CliIo, file: string): Promise<unknown> {
  return JSON.parse(await fs.readFile(path.resolve(io.cwd, file), 'utf8')) as unknown;
}

/** Writes a JSON file (readable: people review plans and approvals). */
export async function writeJson(io: CliIo, file: string, value: unknown): Promise<void> {
  await fs.writeFile(path.resolve(io.cwd, file), `${JSON.stringify(value, null, 2)}\n`, 'utf8');
}

/** The CLI's clock (`now`) as the library's `Clock` is read, or undefined for the system clock. */
export function cliClock(io: CliIo): Pick<Clock, 'now'> | undefined {
  const now = io.now;
  return now && { now: () => now().getTime() };
}
