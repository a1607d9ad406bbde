import { ChildProcess, fork } from 'node:child_process';
import type { ProbeMessage } from './probe-messages';
import { within } from './time';

/** A forked `probe-process.main.ts`: its modules loaded, it runs one role at a time (see `ProbeProcess`). */
export class ProbeChild {
  private readonly listeners = new Set<(message: ProbeMessage) => void>();

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (message: ProbeMessage) => this.listeners.forEach((listener) => listener(message)));
  }

  /** Forks `main`; resolves once it loaded its modules and waits for a role. */
  static async fork(main: string): Promise<ProbeChild> {
    const child = fork(main, [], {
      execArgv: [
        '-r',
        'ts-node/register/transpile-only',
        '-r',
        'tsconfig-paths/register',
        // A V8 CPU profile of each probe process (the consumer, the raw reader), written when it exits.
        ...(process.env.BENCH_PROBE_CPU_PROF
          ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROBE_CPU_PROF}`]
          : []),
      ],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const probeChild = new ProbeChild(child);
    try {
      await within(probeChild.answer('ready', 'probe'), 120_000, 'starting a probe process');
    } catch (error) {
      probeChild.kill();
      throw error;
    }
    return probeChild;
  }

  /** The process's id (CPU time from /proc). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Calls `listener` with every message of the process; returns the function that stops it. */
  onMessage(listener: (message: ProbeMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Sends `message`; to a process that is gone, nothing (what waits for its answer times out). */
  send(message: ProbeMessage): void {
    if (this.child.connected) this.child.send(message);
  }

  /** Sends `message`; resolves on the `expected` answer, rejects on `failed` or when the process exits. */
  request(message: ProbeMessage, expected: 'started' | 'released', what: string): Promise<void> {
    const answer = this.answer(expected, what);
    this.send(message);
    return answer;
  }

  /** Asks the process to end its role and exit; kills it when it has not after 30 s. */
  async exit(): Promise<void> {
    if (!this.alive) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.send({ type: 'stop' });
    await within(exited, 30_000, 'stopping the probe process').catch(() => this.kill());
  }

  kill(): void {
    if (this.alive) this.child.kill('SIGKILL');
  }

  private answer(expected: ProbeMessage['type'], what: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onExit = (code: number | null) => {
        done();
        reject(new Error(`${what} process exited (${code})`));
      };
      const off = this.onMessage((message) => {
        if (message.type === expected) {
          done();
          resolve();
        } else if (message.type === 'failed') {
          done();
          reject(new Error(`${what} process: ${message.message}`));
        }
      });
      const done = () => {
        off();
        this.child.off('exit', onExit);
      };
      this.child.once('exit', onExit);
    });
  }
}
