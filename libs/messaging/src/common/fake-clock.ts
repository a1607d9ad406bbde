import { CancelTimer, Clock } from './clock';

interface FakeTimer {
  readonly id: number;
  at: number;
  readonly callback: () => void;
  /** Set for an interval: fires again this long after each time. */
  readonly intervalMs?: number;
}

/**
 * A `Clock` whose time moves only when a test says so (`advance`), for
 * `overrideProvider(getMessagingClockToken()).useValue(new FakeClock())`: the relay's polls, the consumers'
 * waits, the retention jobs and the reconnect backoffs run as the test advances it, with no real waiting and
 * without jest's fake timers (which would also stop the database and broker clients' own timers). Its
 * `random()` answers 0.5 (every full-jitter delay is half its ceiling) until `setRandom` says otherwise.
 */
export class FakeClock implements Clock {
  private time: number;
  private nextId = 1;
  private readonly timers = new Map<number, FakeTimer>();
  private draw: () => number = () => 0.5;

  /** @param startMs - the time it starts at, milliseconds since the epoch (default 2026-12-01T00:00:00Z) */
  constructor(startMs: number = Date.parse('2026-12-01T00:00:00Z')) {
    this.time = startMs;
  }

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, delayMs: number): CancelTimer {
    return this.add(callback, delayMs);
  }

  setInterval(callback: () => void, intervalMs: number): CancelTimer {
    return this.add(callback, intervalMs, Math.max(1, intervalMs));
  }

  sleep(delayMs: number): Promise<void> {
    return new Promise<void>((resolve) => this.add(resolve, delayMs));
  }

  /** The real event loop's next turn: the work queued now (a query being sent) must still run. */
  nextTurn(): Promise<void> {
    return new Promise<void>((resolve) => setImmediate(resolve));
  }

  /** The value `setRandom` set (default 0.5), or the next draw of the source it set. */
  random(): number {
    return this.draw();
  }

  /** What `random()` answers from now on: always `value`, or each draw of `source` (numbers in `[0, 1)`). */
  setRandom(value: number | (() => number)): void {
    this.draw = typeof value === 'number' ? () => value : value;
  }

  /** Timers started and not yet fired (an interval counts until cancelled). */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /**
   * Moves time forward by `ms`, firing each timer that falls due on the way at its own time, in order, and
   * letting the work it started run a turn of the real event loop before the next one. The work queued
   * before the call gets a turn first (it may be about to start a timer), as with jest's
   * `advanceTimersByTimeAsync`.
   */
  async advance(ms: number): Promise<void> {
    await this.nextTurn();
    const until = this.time + Math.max(0, ms);
    for (;;) {
      const due = this.nextDue(until);
      if (!due) break;
      this.time = Math.max(this.time, due.at);
      if (due.intervalMs === undefined) this.timers.delete(due.id);
      else due.at += due.intervalMs;
      due.callback();
      await this.nextTurn();
    }
    this.time = until;
  }

  private nextDue(until: number): FakeTimer | undefined {
    let first: FakeTimer | undefined;
    for (const timer of this.timers.values()) {
      if (timer.at <= until && (!first || timer.at < first.at)) first = timer;
    }
    return first;
  }

  private add(callback: () => void, delayMs: number, intervalMs?: number): CancelTimer {
    const id = this.nextId++;
    this.timers.set(id, { id, at: this.time + Math.max(0, delayMs), callback, intervalMs });
    return () => void this.timers.delete(id);
  }
}
