import { CancelTimer, Clock } from '../common/clock';

/** A pending wake-up: when it fires, and how to cancel it. */
interface WakeUp {
  readonly at: number;
  readonly cancel: CancelTimer;
}

/**
 * The relay's timers: the safety poll; a retry wake-up that keeps the later due time (so that it finds
 * every row failed so far due); a wake-up when held rows free up that keeps the earlier one.
 */
export class RelayTimers {
  private poll?: CancelTimer;
  private retry?: WakeUp;
  private held?: WakeUp;

  constructor(
    private readonly clock: Clock,
    private readonly wake: () => void,
    private readonly wakeForHeldRows: () => void,
  ) {}

  startPoll(intervalMs: number): void {
    this.poll?.();
    this.poll = this.clock.setInterval(this.wake, intervalMs);
  }

  /** Wakes in `delayMs`, unless a retry wake-up at least as late is already set. */
  retryIn(delayMs: number): void {
    const at = this.clock.now() + delayMs;
    if (this.retry && at <= this.retry.at) return;
    this.retry?.cancel();
    this.retry = this.set(at, () => {
      this.retry = undefined;
      this.wake();
    });
  }

  /** Wakes at `at` (epoch ms), unless an earlier such wake-up is already set. */
  wakeAt(at: number): void {
    if (this.held && this.held.at <= at) return;
    this.held?.cancel();
    this.held = this.set(at, () => {
      this.held = undefined;
      this.wakeForHeldRows();
    });
  }

  clear(): void {
    this.poll?.();
    this.retry?.cancel();
    this.held?.cancel();
    this.poll = this.retry = this.held = undefined;
  }

  private set(at: number, then: () => void): WakeUp {
    return { at, cancel: this.clock.setTimeout(then, Math.max(0, at - this.clock.now())) };
  }
}
