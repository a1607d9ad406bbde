/** One partition's records as far as they were read: `complete` when nothing pending lies beyond them. */
export interface ReadList<T> {
  readonly items: readonly T[];
  readonly complete: boolean;
  /** When the list is not complete: the time of its first record not read, if known (it was seen, not kept). */
  readonly nextAt?: number;
}

/** What `mergeByTime` took, and the lists it would have to read further to take more. */
export interface MergedByTime<T> {
  readonly taken: T[];
  /** Indexes of incomplete lists that ran out while they could still hold the next item. */
  readonly blocked: number[];
}

/**
 * Takes up to `limit` items from several time-ordered lists, oldest first, always from the lists' heads:
 * what it takes from each list is a prefix of that list (a Kafka partition is settled by one offset, so a
 * redrive must move a contiguous run from each partition's start). Ties go to the earlier list.
 *
 * A list read only in part (`complete: false`) stops the merge where it runs out: its next item, not read,
 * could be older than every other candidate. So what is taken is always a prefix of the merge of the whole
 * lists, however little of each was read; `blocked` says which lists to read further to go on. When the
 * time of such a list's next record is known (`nextAt`), the merge goes on while other items are older.
 */
export function mergeByTime<T>(
  lists: ReadonlyArray<ReadList<T>>,
  limit: number,
  timeOf: (item: T) => number,
): MergedByTime<T> {
  const heads = lists.map(() => 0);
  const taken: T[] = [];
  // The time of each list's next item: read, known from a record seen but not kept, or unknown (-Infinity).
  const nextTime = (i: number): number | undefined => {
    const list = lists[i];
    if (heads[i] < list.items.length) return timeOf(list.items[heads[i]]);
    return list.complete ? undefined : (list.nextAt ?? Number.NEGATIVE_INFINITY);
  };
  while (taken.length < limit) {
    let best = -1;
    let bestAt = 0;
    for (let i = 0; i < lists.length; i++) {
      const at = nextTime(i);
      if (at === undefined) continue;
      if (best === -1 || at < bestAt) [best, bestAt] = [i, at];
    }
    if (best === -1) break;
    if (heads[best] >= lists[best].items.length) {
      // The oldest next record was not read: every list waiting that could hold it blocks the merge.
      const blocked = lists.flatMap((list, i) =>
        !list.complete && heads[i] >= list.items.length && (list.nextAt ?? Number.NEGATIVE_INFINITY) <= bestAt
          ? [i]
          : [],
      );
      return { taken, blocked };
    }
    taken.push(lists[best].items[heads[best]]);
    heads[best] += 1;
  }
  return { taken, blocked: [] };
}

/** `mergeByTime` over lists read whole. */
export function firstByTime<T>(
  lists: ReadonlyArray<readonly T[]>,
  limit: number,
  timeOf: (item: T) => number,
): T[] {
  return mergeByTime(
    lists.map((items) => ({ items, complete: true })),
    limit,
    timeOf,
  ).taken;
}
