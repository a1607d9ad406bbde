import { Injectable, OnApplicationShutdown } from '@nestjs/common';

/** The two kinds of timer the registry holds. */
export type TimerKind = 'interval' | 'timeout';

/**
 * The library's own named timers (safety poll, retry wake-ups, retention jobs), cleared at shutdown. Kept
 * apart from `@nestjs/schedule` so that the library neither depends on it nor shares the application's
 * registry (whose major version follows Nest's, and is ESM-only from Nest 12).
 */
@Injectable()
export class TimerRegistry implements OnApplicationShutdown {
  private readonly timers = new Map<string, { kind: TimerKind; handle: NodeJS.Timeout }>();

  addInterval(name: string, handle: NodeJS.Timeout): void {
    this.add(name, 'interval', handle);
  }

  addTimeout(name: string, handle: NodeJS.Timeout): void {
    this.add(name, 'timeout', handle);
  }

  deleteInterval(name: string): void {
    this.delete(name, 'interval');
  }

  deleteTimeout(name: string): void {
    this.delete(name, 'timeout');
  }

  doesExist(kind: TimerKind, name: string): boolean {
    return this.timers.get(name)?.kind === kind;
  }

  onApplicationShutdown(): void {
    for (const { kind, handle } of this.timers.values()) {
      if (kind === 'interval') clearInterval(handle);
      else clearTimeout(handle);
    }
    this.timers.clear();
  }

  private add(name: string, kind: TimerKind, handle: NodeJS.Timeout): void {
    if (this.timers.has(name)) throw new Error(`Timer '${name}' already exists`);
    this.timers.set(name, { kind, handle });
  }

  private delete(name: string, kind: TimerKind): void {
    const timer = this.timers.get(name);
    if (timer?.kind !== kind) return;
    if (kind === 'interval') clearInterval(timer.handle);
    else clearTimeout(timer.handle);
    this.timers.delete(name);
  }
}
