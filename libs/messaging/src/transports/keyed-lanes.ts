/**
 * Runs tasks one at a time per key, in arrival order, and at most `concurrency` at once across keys: keys
 * advance side by side, a key's messages never overtake each other.
 */
export class KeyedLanes {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly waiting: Array<() => void> = [];
  private active = 0;

  constructor(private readonly concurrency: number) {}

  /** Queues `task` behind the key's earlier tasks; resolves when it has run (it never rejects). */
  run(key: string, task: () => Promise<void>): Promise<void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(() => this.limited(task));
    this.tails.set(key, next);
    void next.finally(() => {
      if (this.tails.get(key) === next) this.tails.delete(key);
    });
    return next;
  }

  /** Resolves when every task queued so far has finished. */
  async drain(): Promise<void> {
    while (this.tails.size > 0) await Promise.allSettled([...this.tails.values()]);
  }

  private async limited(task: () => Promise<void>): Promise<void> {
    // A finishing task hands its slot straight to the first waiter, so nobody can slip in between.
    if (this.active >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active += 1;
    try {
      await task();
    } catch {
      // Tasks report their own failures; one must not stop the lane.
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    }
  }
}
