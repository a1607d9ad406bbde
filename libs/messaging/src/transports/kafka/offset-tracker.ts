/**
 * The offsets of one partition's batch in flight: which were handed out, which are settled. The commit point
 * is the end of the contiguous run of settled offsets from the first one handed out, so a commit never
 * passes a message that is not finished, while messages of other keys finish in any order.
 */
export class OffsetTracker {
  private readonly dispatched: string[] = [];
  private readonly settled = new Set<string>();

  /** Offsets must be handed out in the partition's order. */
  dispatch(offset: string): void {
    this.dispatched.push(offset);
  }

  settle(offset: string): void {
    this.settled.add(offset);
  }

  /** The last offset that can be committed (all before it settled too), or undefined. */
  committable(): string | undefined {
    let last: string | undefined;
    for (const offset of this.dispatched) {
      if (!this.settled.has(offset)) break;
      last = offset;
    }
    return last;
  }

  /** The first offset handed out and not settled, where the partition resumes. */
  firstUnsettled(): string | undefined {
    return this.dispatched.find((offset) => !this.settled.has(offset));
  }
}
