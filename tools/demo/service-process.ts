import { ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { httpRequest } from './http-request';

/** What a service answers on `GET /health/live` (see `HealthController`). */
export interface ServiceHealth {
  status: string;
  transport: { kind: string; connected: boolean; lastError?: string };
  consumers: string[];
}

/** Options of one service process. */
export interface ServiceProcessOptions {
  /** For messages: `post-service`. */
  name: string;
  /** The compiled `main.js`. */
  entry: string;
  port: number;
  /** Environment on top of this process's own; `undefined` removes a variable. */
  env: Record<string, string | undefined>;
  /** stdout and stderr are appended here. */
  logFile: string;
  /** Ready when the health report satisfies this (default: it answers at all). */
  ready?: (health: ServiceHealth) => boolean;
}

/**
 * A demo service as a real process (`node dist/.../main.js`), driven like an operator would: start and
 * wait until healthy, stop gracefully (SIGTERM), or kill (SIGKILL) as a crash would, and start again.
 */
export class ServiceProcess {
  private child?: ChildProcess;
  private exit?: Promise<number | null>;

  constructor(private readonly options: ServiceProcessOptions) {}

  get name(): string {
    return this.options.name;
  }

  get url(): string {
    return `http://127.0.0.1:${this.options.port}`;
  }

  get logFile(): string {
    return this.options.logFile;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** Spawns the process and resolves once it is ready; rejects (with its last log lines) if it exits first. */
  async start(timeoutMs = 90_000): Promise<void> {
    if (this.child) throw new Error(`${this.name} is already running (pid ${this.child.pid}).`);
    await fs.mkdir(path.dirname(this.options.logFile), { recursive: true });
    const out = openSync(this.options.logFile, 'a');
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    for (const [name, value] of Object.entries(this.options.env)) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
    try {
      const child = spawn(process.execPath, [this.options.entry], { env, stdio: ['ignore', out, out] });
      this.child = child;
      this.exit = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
      void this.exit.then(() => {
        if (this.child === child) this.child = undefined;
      });
    } finally {
      closeSync(out);
    }
    await this.waitUntilReady(Date.now() + timeoutMs);
  }

  /** SIGTERM: the service finishes in-flight work, releases its claims and leaves its consumer group. */
  async stop(graceMs = 20_000): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>(
      (resolve) => (timer = setTimeout(() => resolve('timeout'), graceMs)),
    );
    const exited = await Promise.race([this.exit, timeout]);
    clearTimeout(timer);
    if (exited === 'timeout') await this.kill();
  }

  /** SIGKILL: no shutdown hook runs, as in a crash or an OOM kill. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGKILL');
    await this.exit;
  }

  /** The service's health report, or undefined while it does not answer. */
  async health(): Promise<ServiceHealth | undefined> {
    try {
      const answer = await httpRequest('GET', `${this.url}/health/live`, undefined, 2_000);
      return answer.status === 200 ? (JSON.parse(answer.text) as ServiceHealth) : undefined;
    } catch {
      return undefined;
    }
  }

  /** The last lines of the service's log. */
  async logTail(lines = 40): Promise<string> {
    const text = await fs.readFile(this.options.logFile, 'utf8').catch(() => '');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  }

  private async waitUntilReady(deadline: number): Promise<void> {
    const ready = this.options.ready ?? (() => true);
    for (;;) {
      if (!this.child) {
        throw new Error(
          `${this.name} exited while starting (exit code ${String(await this.exit)}). ` +
            `Last lines of ${this.logFile}:\n${await this.logTail()}`,
        );
      }
      const health = await this.health();
      if (health && ready(health)) return;
      if (Date.now() > deadline) {
        await this.kill();
        throw new Error(
          `${this.name} did not become ready in time. Last lines of ${this.logFile}:\n${await this.logTail()}`,
        );
      }
      await sleep(200);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
