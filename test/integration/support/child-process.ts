import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

/** A TypeScript test fixture run as a process of its own (ts-node, transpile only: decorator metadata works). */
export class FixtureProcess {
  private child?: ChildProcess;
  private output = '';

  constructor(
    private readonly script: string,
    private readonly env: Record<string, string>,
    /** The Node.js binary that runs it: the tests' own by default. */
    private readonly node: string = process.execPath,
  ) {}

  /** Starts the process and resolves when it prints READY. */
  async start(timeoutMs = 60_000): Promise<this> {
    const child = spawn(
      this.node,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', this.script],
      {
        cwd: ROOT,
        env: { ...process.env, ...this.env, TS_NODE_PROJECT: path.join(ROOT, 'tsconfig.json') },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.script} not READY in ${timeoutMs} ms:\n${this.output}`)),
        timeoutMs,
      );
      const onData = (chunk: Buffer) => {
        this.output += chunk.toString();
        if (this.output.includes('READY')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${this.script} exited with ${code}:\n${this.output}`));
      });
    });
    return this;
  }

  /** SIGKILL: no shutdown hooks, no commits, no acks. */
  async kill(): Promise<void> {
    await this.signal('SIGKILL');
  }

  /** SIGTERM: a graceful stop. */
  async terminate(): Promise<void> {
    await this.signal('SIGTERM');
  }

  get log(): string {
    return this.output;
  }

  /** Exit code or signal once the process ended; undefined while it runs. */
  get exit(): string | undefined {
    const child = this.child;
    if (!child || (child.exitCode === null && child.signalCode === null)) return undefined;
    return String(child.exitCode ?? child.signalCode);
  }

  private async signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.removeAllListeners('exit');
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
  }
}
