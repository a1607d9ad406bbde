/**
 * Takes up to `limit` items from several time-ordered lists, oldest first, always from the lists' heads:
 * what it takes from each list is a prefix of that list (a Kafka partition is settled by one offset, so a
 * redrive must move a contiguous run from each partition's start). Ties go to the earlier list.
 */
export function firstByTime<T>(
  lists: ReadonlyArray<readonly T[]>,
  limit: number,
  timeOf: (item: T) => number,
): T[] {
  const heads = lists.map(() => 0);
  const taken: T[] = [];
  while (taken.length < limit) {
    let best = -1;
    for (let i = 0; i < lists.length; i++) {
      if (heads[i] >= lists[i].length) continue;
      if (best === -1 || timeOf(lists[i][heads[i]]) < timeOf(lists[best][heads[best]])) best = i;
    }
    if (best === -1) break;
    taken.push(lists[best][heads[best]]);
    heads[best] += 1;
  }
  return taken;
}
