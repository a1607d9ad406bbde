import { ProbeChild } from './probe-child';
import { PROBE_MAIN, ProbeProcess, ProbeProcessOptions, ProbeStarter } from './probe-process';
import { within } from './time';

/**
 * Where the scenarios' processes (`ProbeProcess`) come from. The full run forks a fresh process for every
 * role and ends it with the role, so that no figure is taken in a process another role warmed up or left
 * garbage in. The smoke run (`reuse`) keeps a process whose role ended for the next role and can fork
 * processes ahead (`prefork`): loading the bench's modules into a new Node process takes seconds, the
 * smoke run's roles take less.
 */
export class ProbeProcesses implements ProbeStarter {
  private readonly idle: Array<Promise<ProbeChild>> = [];
  private readonly children = new Set<ProbeChild>();

  constructor(private readonly reuse: boolean) {}

  /** Forks `count` processes now, in the background, for the roles to come. */
  prefork(count: number): void {
    for (let i = 0; i < count; i++) this.idle.push(this.fork());
  }

  async start(options: ProbeProcessOptions): Promise<ProbeProcess> {
    const child = await (this.idle.shift() ?? this.fork());
    const probeProcess = new ProbeProcess(child, (c) => this.release(c));
    try {
      return await probeProcess.start(options);
    } catch (error) {
      child.kill();
      this.children.delete(child);
      throw error;
    }
  }

  /** Ends every process (what a role still holds is closed by its process on the way out). */
  async close(): Promise<void> {
    await Promise.allSettled(this.idle.splice(0));
    await Promise.all([...this.children].map((child) => child.exit()));
    this.children.clear();
  }

  private async release(child: ProbeChild): Promise<void> {
    if (this.reuse && child.alive) {
      const released = child.request({ type: 'release' }, 'released', 'probe');
      const ok = await within(released, 30_000, 'ending the probe process role').then(
        () => true,
        () => false, // a process that cannot end its role is not reused
      );
      if (ok) {
        this.idle.push(Promise.resolve(child));
        return;
      }
    }
    await child.exit();
    this.children.delete(child);
  }

  private fork(): Promise<ProbeChild> {
    const forked = ProbeChild.fork(PROBE_MAIN).then((child) => {
      this.children.add(child);
      return child;
    });
    forked.catch(() => undefined); // a prefork that failed says so where a role takes it
    return forked;
  }
}
