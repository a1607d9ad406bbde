/** A share's handler slots: how many of its tasks run, and the ones waiting for one of them. */
interface Slots {
  active: number;
  readonly waiting: Array<() => void>;
}

/**
 * Runs tasks one at a time per key, in arrival order, and at most `concurrency` at once per share across
 * keys: keys advance side by side, a key's messages never overtake each other. A share (a tenant, with
 * tenants on; one share otherwise) has slots of its own, so tasks that wait long (for a tenant's database
 * that does not answer) hold only their own share's slots, never another's.
 */
export class KeyedLanes {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly shares = new Map<string, Slots>();

  constructor(private readonly concurrency: number) {}

  /**
   * Queues `task` behind the key's earlier tasks; resolves when it has run (it never rejects). A key belongs
   * to one share: the caller names it (`share`) the same way each time.
   */
  run(key: string, task: () => Promise<void>, share = ''): Promise<void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(() => this.limited(share, task));
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

  private async limited(share: string, task: () => Promise<void>): Promise<void> {
    let slots = this.shares.get(share);
    if (!slots) this.shares.set(share, (slots = { active: 0, waiting: [] }));
    // A finishing task hands its slot straight to the first waiter, so nobody can slip in between.
    if (slots.active >= this.concurrency) await new Promise<void>((resolve) => slots.waiting.push(resolve));
    else slots.active += 1;
    try {
      await task();
    } catch {
      // Tasks report their own failures; one must not stop the lane.
    } finally {
      const next = slots.waiting.shift();
      if (next) next();
      else if (--slots.active === 0) this.shares.delete(share);
    }
  }
}
