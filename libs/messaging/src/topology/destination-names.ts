/**
 * Names of the destinations the library derives for a consumer group, the same on both transports:
 * Kafka topics, or RabbitMQ queues (the work queue is the group's queue on the destination's exchange).
 */
export const destinationNames = {
  /** RabbitMQ: the group's work queue. */
  workQueue: (destination: string, group: string) => `${destination}.${group}`,
  /**
   * RabbitMQ: the group's direct exchange for its retry and dead-letter copies, bound to its retry queues and
   * its DLQ (each by its own name): a service may write it without being able to reach any other queue.
   */
  failureExchange: (destination: string, group: string) => `${destination}.${group}.failures`,
  /** The group's dead-letter destination. */
  deadLetter: (destination: string, group: string) => `${destination}.${group}.dlq`,
  /** The group's retry destination for one delay tier. */
  retry: (destination: string, group: string, tierMs: number) => `${destination}.${group}.retry.${tierMs}ms`,
  /**
   * RabbitMQ: the destination's journal, a stream queue replay reads (`JournalTopology`). The colon is in no
   * destination's or group's name, so no work, retry, dead-letter or archive queue can have this name.
   */
  journal: (destination: string) => `${destination}:journal`,
};

/** How a dead-letter destination's name may split into the destination and the group it is for. */
export interface DeadLetterSplit {
  readonly destination: string;
  readonly group: string;
}

const DLQ_SUFFIX = '.dlq';

/**
 * Every way `name` reads as `destinationNames.deadLetter(destination, group)`: none when it does not end in
 * `.dlq`, one for `orders.billing.dlq`, several when the names hold dots (`shop.orders.billing.dlq` is the
 * group `billing` of `shop.orders`, or the group `orders.billing` of `shop`): then only the topology says.
 */
export function deadLetterSplits(name: string): DeadLetterSplit[] {
  if (!name.endsWith(DLQ_SUFFIX)) return [];
  const stem = name.slice(0, -DLQ_SUFFIX.length);
  const splits: DeadLetterSplit[] = [];
  for (let at = stem.indexOf('.'); at > 0; at = stem.indexOf('.', at + 1)) {
    const split = { destination: stem.slice(0, at), group: stem.slice(at + 1) };
    if (split.group !== '') splits.push(split);
  }
  return splits;
}
