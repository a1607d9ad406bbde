/** One partition's records as far as they were read: `complete` when nothing pending lies beyond them. */
export interface ReadList<T> {
  readonly items: readonly T[];
  readonly complete: boolean;
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
 * lists, however little of each was read; `blocked` says which lists to read further to go on.
 */
export function mergeByTime<T>(
  lists: ReadonlyArray<ReadList<T>>,
  limit: number,
  timeOf: (item: T) => number,
): MergedByTime<T> {
  const heads = lists.map(() => 0);
  const taken: T[] = [];
  while (taken.length < limit) {
    const blocked = lists.flatMap((list, i) => (!list.complete && heads[i] >= list.items.length ? [i] : []));
    if (blocked.length > 0) return { taken, blocked };
    let best = -1;
    for (let i = 0; i < lists.length; i++) {
      if (heads[i] >= lists[i].items.length) continue;
      if (best === -1 || timeOf(lists[i].items[heads[i]]) < timeOf(lists[best].items[heads[best]])) best = i;
    }
    if (best === -1) break;
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
