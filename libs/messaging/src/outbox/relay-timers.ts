import { CancelTimer, Clock } from '../common/clock';

/** A pending wake-up: when it fires, and how to cancel it. */
interface WakeUp {
  readonly at: number;
  readonly cancel: CancelTimer;
}

/**
 * The longest delay `setTimeout` keeps (2^31 - 1 ms, about 24.8 days): a longer one fires at once. A wake-up
 * further ahead is set for this long, and the relay sets it again when it fires.
 */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

/**
 * The relay's timers: the safety poll; a retry wake-up that keeps the later due time (so that it finds
 * every row failed so far due); a wake-up when held rows free up that keeps the earlier one; a wake-up when
 * the next scheduled message is due, which the latest look at the scheduled messages sets; the mark of a
 * published batch that no claim took within its wait.
 */
export class RelayTimers {
  private poll?: CancelTimer;
  private retry?: WakeUp;
  private held?: WakeUp;
  private scheduled?: WakeUp;
  private mark?: CancelTimer;

  constructor(
    private readonly clock: Clock,
    private readonly wake: () => void,
    private readonly wakeForHeldRows: () => void,
    /** The safety poll and the scheduled wake-up: look at the scheduled messages too. */
    private readonly wakeForScheduled: () => void = wake,
    /** A published batch waited long enough for a claim to mark it: mark it on its own. */
    private readonly markWaiting: () => void = () => undefined,
  ) {}

  /** Marks the waiting batch in `delayMs`, unless a claim took it before (`cancelMark`). */
  markIn(delayMs: number): void {
    this.mark?.();
    this.mark = this.clock.setTimeout(() => {
      this.mark = undefined;
      this.markWaiting();
    }, delayMs);
  }

  /** A claim took the waiting batch: no mark on its own. */
  cancelMark(): void {
    this.mark?.();
    this.mark = undefined;
  }

  startPoll(intervalMs: number): void {
    this.poll?.();
    this.poll = this.clock.setInterval(this.wakeForScheduled, intervalMs);
  }

  /** Wakes in `delayMs` (the next scheduled message is due), replacing the scheduled wake-up set before. */
  scheduledIn(delayMs: number): void {
    this.scheduled?.cancel();
    this.scheduled = this.set(this.clock.now() + delayMs, () => {
      this.scheduled = undefined;
      this.wakeForScheduled();
    });
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
    this.scheduled?.cancel();
    this.mark?.();
    this.poll = this.retry = this.held = this.scheduled = this.mark = undefined;
  }

  private set(at: number, then: () => void): WakeUp {
    const delay = Math.min(MAX_TIMER_DELAY_MS, Math.max(0, at - this.clock.now()));
    return { at, cancel: this.clock.setTimeout(then, delay) };
  }
}
