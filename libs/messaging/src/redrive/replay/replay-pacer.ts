import { Clock } from '../../common/clock';

/** What a pacer waits with: the clock it reads and a sleep on the same clock (the library's `Clock`). */
export type PacerClock = Pick<Clock, 'now' | 'sleep'>;

/**
 * Lets at most `ratePerSecond` publishes through per second: each `admit()` resolves no sooner than
 * `1000 / ratePerSecond` ms after the previous one did (by `clock`), so no span of one second holds more
 * than `ratePerSecond` of them. No burst: a late publish does not earn the next ones an early start.
 */
export class ReplayPacer {
  private readonly intervalMs: number;
  private last: number | undefined;

  constructor(
    ratePerSecond: number,
    private readonly clock: PacerClock,
  ) {
    this.intervalMs = 1000 / ratePerSecond;
  }

  /** Waits until the next publish may go; resolves with the time it was let through. */
  async admit(): Promise<number> {
    if (this.last !== undefined) {
      const due = this.last + this.intervalMs;
      for (let now = this.clock.now(); now < due; now = this.clock.now()) {
        await this.clock.sleep(Math.ceil(due - now));
      }
    }
    this.last = this.clock.now();
    return this.last;
  }
}
