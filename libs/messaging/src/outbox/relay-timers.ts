import { TimerRegistry } from '../common/timer-registry';

/**
 * The relay's timers, registered with the library's `TimerRegistry`: the safety poll; a retry wake-up that keeps the
 * later due time (so that it finds every row failed so far due); a wake-up when held rows free up that keeps
 * the earlier one.
 */
export class RelayTimers {
  private readonly poll: string;
  private readonly retry: string;
  private readonly held: string;
  private retryAt = 0;
  private heldAt = 0;

  constructor(
    private readonly scheduler: TimerRegistry,
    suffix: string,
    private readonly wake: () => void,
    private readonly wakeForHeldRows: () => void,
  ) {
    this.poll = `messaging-relay-poll-${suffix}`;
    this.retry = `messaging-relay-retry-${suffix}`;
    this.held = `messaging-relay-held-${suffix}`;
  }

  startPoll(intervalMs: number): void {
    this.scheduler.addInterval(this.poll, setInterval(this.wake, intervalMs));
  }

  /** Wakes in `delayMs`, unless a retry wake-up at least as late is already set. */
  retryIn(delayMs: number): void {
    const at = Date.now() + delayMs;
    if (at <= this.retryAt && this.exists(this.retry)) return;
    this.retryAt = at;
    this.set(this.retry, delayMs, this.wake);
  }

  /** Wakes at `at` (epoch ms), unless an earlier such wake-up is already set. */
  wakeAt(at: number): void {
    if (this.heldAt > Date.now() && this.heldAt <= at && this.exists(this.held)) return;
    this.heldAt = at;
    this.set(this.held, Math.max(0, at - Date.now()), this.wakeForHeldRows);
  }

  clear(): void {
    if (this.scheduler.doesExist('interval', this.poll)) this.scheduler.deleteInterval(this.poll);
    for (const name of [this.retry, this.held]) if (this.exists(name)) this.scheduler.deleteTimeout(name);
  }

  private set(name: string, delayMs: number, then: () => void): void {
    if (this.exists(name)) this.scheduler.deleteTimeout(name);
    const timer = setTimeout(() => {
      if (this.exists(name)) this.scheduler.deleteTimeout(name);
      then();
    }, delayMs);
    this.scheduler.addTimeout(name, timer);
  }

  private exists(name: string): boolean {
    return this.scheduler.doesExist('timeout', name);
  }
}
