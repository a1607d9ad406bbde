/** One reading of a counter: when, and its value. */
export interface CounterReading {
  /** When it was read, ms since the epoch. */
  readonly at: number;
  /** The counter's value then. */
  readonly value: number;
}

/**
 * How much a counter grew over `readings` (oldest first), as Prometheus's `increase()` counts it: a value
 * below the one before is a reset (the service restarted and its counters began at 0 again), so the value
 * itself is what it grew by since the reset, not a negative difference.
 */
export function counterIncrease(readings: readonly CounterReading[]): number {
  let total = 0;
  for (let i = 1; i < readings.length; i++) {
    const [before, now] = [readings[i - 1].value, readings[i].value];
    total += now >= before ? now - before : now;
  }
  return total;
}

/**
 * The counter's rate per minute over `readings` (oldest first), resets included (`counterIncrease`);
 * undefined while they span less than `minSpanMs` (one reading, or readings too close to tell).
 */
export function ratePerMinute(readings: readonly CounterReading[], minSpanMs = 60_000): number | undefined {
  if (readings.length < 2) return undefined;
  const span = readings[readings.length - 1].at - readings[0].at;
  if (span < minSpanMs || span <= 0) return undefined;
  return (counterIncrease(readings) * 60_000) / span;
}

/**
 * Readings of many counters, by key, kept for `keepMs` (at most `most` each), and their rates over the
 * readings of the last `windowMs`: a rate survives a service's restart.
 */
export class CounterHistory {
  private readonly readings = new Map<string, CounterReading[]>();

  constructor(
    private readonly windowMs = 5 * 60_000,
    private readonly most = 60,
  ) {}

  /** Records `value` of counter `key` at `at`; returns its rate per minute, once there is one. */
  read(key: string, value: number, at: number): number | undefined {
    const kept = (this.readings.get(key) ?? []).filter((r) => at - r.at <= this.windowMs && r.at <= at);
    kept.push({ at, value });
    const trimmed = kept.slice(-this.most);
    this.readings.set(key, trimmed);
    return ratePerMinute(trimmed);
  }
}
