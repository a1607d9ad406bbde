/** How many finished offsets the tracker keeps before dropping them from its list. */
const COMPACT_AFTER = 1_024;

/**
 * The offsets of one partition handed out to handlers: which were handed out, which are settled. The commit
 * point is the end of the contiguous run of settled offsets from the first one handed out, so a commit never
 * passes a message that is not finished, while messages of other keys finish in any order. Each call costs
 * O(1) amortised: the tracker lives as long as the partition is consumed, not one fetch.
 */
export class OffsetTracker {
  private dispatched: string[] = [];
  /** Index of the first offset of `dispatched` not known to be settled. */
  private head = 0;
  private readonly settled = new Set<string>();
  private last?: string;

  /** Offsets must be handed out in the partition's order. */
  dispatch(offset: string): void {
    this.dispatched.push(offset);
  }

  settle(offset: string): void {
    this.settled.add(offset);
    while (this.head < this.dispatched.length && this.settled.delete(this.dispatched[this.head])) {
      this.last = this.dispatched[this.head];
      this.head += 1;
    }
    if (this.head >= COMPACT_AFTER) {
      this.dispatched = this.dispatched.slice(this.head);
      this.head = 0;
    }
  }

  /** The last offset that can be committed (all before it settled too), or undefined. */
  committable(): string | undefined {
    return this.last;
  }

  /** The first offset handed out and not settled, where the partition resumes. */
  firstUnsettled(): string | undefined {
    return this.dispatched[this.head];
  }

  /** Offsets handed out and not settled. */
  get unsettled(): number {
    return this.dispatched.length - this.head;
  }
}
