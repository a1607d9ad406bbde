import { now } from './time';

/**
 * Records when the consumer's handler started for each message, on the clock the writer records commits
 * with (`now()`; a consumer in another process reports its times through `record`, on the same clock). A
 * repeated delivery keeps its first start.
 */
export class HandlerProbe {
  private readonly starts = new Map<string, Map<number, number>>();
  private readonly waiters = new Set<() => void>();

  started(run: string, seq: number): void {
    this.record(run, seq, now());
  }

  record(run: string, seq: number, at: number): void {
    let byRun = this.starts.get(run);
    if (!byRun) this.starts.set(run, (byRun = new Map<number, number>()));
    if (!byRun.has(seq)) byRun.set(seq, at);
    this.waiters.forEach((w) => w());
  }

  count(run: string): number {
    return this.starts.get(run)?.size ?? 0;
  }

  /** Start times of `run`, by sequence number. */
  startsOf(run: string): ReadonlyMap<number, number> {
    return this.starts.get(run) ?? new Map<number, number>();
  }

  /** Resolves once `count` messages of `run` started; rejects after `timeoutMs` without progress. */
  async waitFor(
    run: string,
    count: number,
    timeoutMs: number,
    onProgress?: (done: number) => void,
  ): Promise<void> {
    let last = -1;
    let lastChange = Date.now();
    while (this.count(run) < count) {
      const now = this.count(run);
      if (now !== last) {
        last = now;
        lastChange = Date.now();
        onProgress?.(now);
      }
      if (Date.now() - lastChange > timeoutMs) {
        throw new Error(
          `Only ${now} of ${count} messages of ${run} reached the handler (stalled ${timeoutMs} ms)`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, 200);
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.waiters.add(done);
      });
      this.waiters.clear();
    }
    onProgress?.(this.count(run));
  }

  forget(run: string): void {
    this.starts.delete(run);
  }
}
