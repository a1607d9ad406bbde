/**
 * A consumer group's mean lag (commit to handler start, `messaging_consumer_lag_seconds`) over the messages
 * it handled since the last reading: the histogram's sum and count grew by so much, their ratio is the mean.
 * A count below the last one is a restart (both began at 0 again): the totals since are the difference.
 */
export class MeanLag {
  private readonly last = new Map<string, { sum: number; count: number }>();

  constructor(private readonly most = 10_000) {}

  /** Records the totals of `key`; returns the mean lag, seconds, of the messages since the last reading. */
  read(key: string, sum: number, count: number): number | undefined {
    const before = this.last.get(key);
    if (before || this.last.size < this.most) this.last.set(key, { sum, count });
    if (!before) return undefined;
    const [dSum, dCount] = count >= before.count ? [sum - before.sum, count - before.count] : [sum, count];
    return dCount > 0 ? dSum / dCount : undefined;
  }
}
