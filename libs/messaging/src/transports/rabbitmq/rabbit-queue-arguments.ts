import { destinationNames } from '../../topology/destination-names';
import { GroupTopology, JournalTopology, RabbitQueueType } from '../../topology/messaging-topology';

/** Which of a group's queues: the work queue, its dead-letter queue, or the retry queue of one delay tier. */
export type RabbitQueueRole =
  | { readonly kind: 'work' }
  | { readonly kind: 'dead-letter' }
  | { readonly kind: 'retry'; readonly tierMs: number };

/** A queue of a group: its name and the arguments it is declared with. */
export interface RabbitQueueSpec {
  readonly name: string;
  readonly arguments: Readonly<Record<string, string | number>>;
  /**
   * A quorum work or dead-letter queue: the arguments it was declared with before the library gave it a
   * delivery limit (only its type), which an existing queue may still have (see `withoutDeliveryLimit`).
   */
  readonly legacyArguments?: Readonly<Record<string, string | number>>;
}

/**
 * A group as the RabbitMQ transport declares it: its queue type resolved and, learnt at startup, which of
 * its quorum queues exist without the delivery-limit arguments (declared by an earlier version: a queue's
 * arguments cannot change, so they are declared again as they are, and a policy has to protect them).
 */
export interface RabbitGroupTopology extends GroupTopology {
  readonly withoutDeliveryLimit?: ReadonlySet<string>;
}

/**
 * How often a message may come back to a quorum work queue before the broker dead-letters it into the
 * group's dead-letter queue. The library never requeues (failures go to retry tiers or the DLQ, published
 * and confirmed first), so a message comes back only when a consumer's channel closed before it was acked
 * (a crash, a lost connection), and with it every other unacked one (up to the prefetch). RabbitMQ 4.x sets
 * a limit of 20 on every quorum queue and then drops the message; 3.x has none, and a message that crashes
 * its consumer loops for ever. Set explicitly, with a dead-letter route, the same on both: a crash loop ends
 * after 20 rounds, and the message and its neighbours wait in the DLQ, none dropped. A policy can lower it
 * (RabbitMQ takes the lower of the two), not raise it.
 */
export const QUORUM_DELIVERY_LIMIT = 20;

/**
 * A quorum dead-letter queue's limit: reading a DLQ (the redrive's dry runs and plans, `basic.get` on a
 * channel then closed) returns the messages read, and each return counts. RabbitMQ 4.x's default of 20
 * would drop a dead-letter after 20 reads; -1 means no limit from 4.0 on but a limit of 0 on 3.x (measured
 * on 3.10: dropped at the first return). A million reads is no limit in practice, on every version.
 */
export const DEAD_LETTER_DELIVERY_LIMIT = 1_000_000;

/** The arguments the delivery limit and its dead-letter route add to a quorum queue (absent on older ones). */
export const DELIVERY_LIMIT_ARGUMENTS: readonly string[] = [
  'x-delivery-limit',
  'x-dead-letter-exchange',
  'x-dead-letter-routing-key',
  'x-dead-letter-strategy',
  'x-overflow',
];

/**
 * The arguments each queue of a group is declared with, classic or quorum. A retry tier holds messages for
 * its TTL, then dead-letters them back to the work queue. On a quorum queue, dead-lettering is
 * `at-least-once` (it needs `x-overflow: reject-publish`, which without a length limit refuses nothing): the
 * default `at-most-once` may drop a message whose dead-lettering is interrupted by a leader change. A quorum
 * work queue dead-letters what passes `QUORUM_DELIVERY_LIMIT` into the group's DLQ; a quorum DLQ has
 * `DEAD_LETTER_DELIVERY_LIMIT`. A queue in `group.withoutDeliveryLimit` is declared with its legacy arguments.
 */
export function rabbitQueueSpec(group: RabbitGroupTopology, role: RabbitQueueRole): RabbitQueueSpec {
  const quorum = (group.queueType ?? 'classic') === 'quorum';
  const type: Record<string, string> = quorum ? { 'x-queue-type': 'quorum' } : {};
  const workQueue = destinationNames.workQueue(group.destination, group.group);
  const deadLetterQueue = destinationNames.deadLetter(group.destination, group.group);
  const atLeastOnce = { 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' };
  const limited = (name: string, limit: Record<string, string | number>): RabbitQueueSpec => {
    if (!quorum) return { name, arguments: type };
    if (group.withoutDeliveryLimit?.has(name)) return { name, arguments: type, legacyArguments: type };
    return { name, arguments: { ...type, ...limit }, legacyArguments: type };
  };
  if (role.kind === 'work') {
    return limited(workQueue, {
      'x-delivery-limit': QUORUM_DELIVERY_LIMIT,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': deadLetterQueue,
      ...atLeastOnce,
    });
  }
  if (role.kind === 'dead-letter') {
    return limited(deadLetterQueue, { 'x-delivery-limit': DEAD_LETTER_DELIVERY_LIMIT });
  }
  return {
    name: destinationNames.retry(group.destination, group.group, role.tierMs),
    arguments: {
      ...type,
      'x-message-ttl': role.tierMs,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': workQueue,
      ...(quorum ? atLeastOnce : {}),
    },
  };
}

/** Every queue of a group: work queue, retry tiers, dead-letter queue. */
export function rabbitQueuesOf(group: RabbitGroupTopology): RabbitQueueSpec[] {
  return [
    rabbitQueueSpec(group, { kind: 'work' }),
    ...group.retryTiersMs.map((tierMs) => rabbitQueueSpec(group, { kind: 'retry', tierMs })),
    rabbitQueueSpec(group, { kind: 'dead-letter' }),
  ];
}

/**
 * The policy that gives an existing quorum queue, declared without them, the limit and dead-letter route
 * the library now declares, as a `rabbitmqctl` command (one policy applies to a queue: merge the keys into
 * one that already matches it, if any).
 */
export function deliveryLimitPolicy(queue: RabbitQueueSpec): string {
  const keys = Object.fromEntries(
    Object.entries(rabbitQueueArgumentsOf(queue)).map(([name, value]) => [name.slice(2), value]),
  );
  const pattern = `^${queue.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
  return `rabbitmqctl set_policy 'messaging-${queue.name}' '${pattern}' '${JSON.stringify(keys)}' --apply-to queues`;
}

/** The delivery-limit arguments a queue is declared with (its full spec's, not the legacy ones). */
function rabbitQueueArgumentsOf(queue: RabbitQueueSpec): Record<string, string | number> {
  return Object.fromEntries(
    Object.entries(queue.arguments).filter(([name]) => DELIVERY_LIMIT_ARGUMENTS.includes(name)),
  );
}

/** The queue type of each group: its own, else the destination's, else the default. */
export function withQueueTypes(
  groups: readonly GroupTopology[],
  byDestination: Readonly<Record<string, RabbitQueueType>>,
  fallback: RabbitQueueType,
): GroupTopology[] {
  return groups.map((g) => ({ ...g, queueType: g.queueType ?? byDestination[g.destination] ?? fallback }));
}

/**
 * A destination's journal as declared: a durable stream queue (RabbitMQ 3.9+) with the retention asked for
 * (`x-max-age`, `x-max-length-bytes`; a stream without either keeps everything, for ever).
 */
export function journalQueueSpec(journal: JournalTopology): RabbitQueueSpec {
  return {
    name: destinationNames.journal(journal.destination),
    arguments: {
      'x-queue-type': 'stream',
      ...(journal.maxAge !== undefined ? { 'x-max-age': journal.maxAge } : {}),
      ...(journal.maxLengthBytes !== undefined ? { 'x-max-length-bytes': journal.maxLengthBytes } : {}),
    },
  };
}
