import { destinationNames } from '../../dead-letter/destination-names';
import { GroupTopology, RabbitQueueType } from '../../topology/messaging-topology';

/** Which of a group's queues: the work queue, its dead-letter queue, or the retry queue of one delay tier. */
export type RabbitQueueRole =
  | { readonly kind: 'work' }
  | { readonly kind: 'dead-letter' }
  | { readonly kind: 'retry'; readonly tierMs: number };

/** A queue of a group: its name and the arguments it is declared with. */
export interface RabbitQueueSpec {
  readonly name: string;
  readonly arguments: Readonly<Record<string, string | number>>;
}

/**
 * The arguments each queue of a group is declared with, classic or quorum. A retry tier holds messages for
 * its TTL, then dead-letters them back to the work queue. On a quorum queue that dead-lettering is
 * `at-least-once` (it needs `x-overflow: reject-publish`): the default `at-most-once` may drop a message
 * whose dead-lettering is interrupted by a leader change, which would lose a retry. No `x-delivery-limit`:
 * the library counts attempts itself (its headers) and never requeues, so a broker limit would only drop
 * messages whose consumer crashed repeatedly.
 */
export function rabbitQueueSpec(group: GroupTopology, role: RabbitQueueRole): RabbitQueueSpec {
  const quorum = (group.queueType ?? 'classic') === 'quorum';
  const type: Record<string, string> = quorum ? { 'x-queue-type': 'quorum' } : {};
  const workQueue = destinationNames.workQueue(group.destination, group.group);
  if (role.kind === 'work') return { name: workQueue, arguments: type };
  if (role.kind === 'dead-letter') {
    return { name: destinationNames.deadLetter(group.destination, group.group), arguments: type };
  }
  return {
    name: destinationNames.retry(group.destination, group.group, role.tierMs),
    arguments: {
      ...type,
      'x-message-ttl': role.tierMs,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': workQueue,
      ...(quorum ? { 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' } : {}),
    },
  };
}

/** Every queue of a group: work queue, retry tiers, dead-letter queue. */
export function rabbitQueuesOf(group: GroupTopology): RabbitQueueSpec[] {
  return [
    rabbitQueueSpec(group, { kind: 'work' }),
    ...group.retryTiersMs.map((tierMs) => rabbitQueueSpec(group, { kind: 'retry', tierMs })),
    rabbitQueueSpec(group, { kind: 'dead-letter' }),
  ];
}

/** The queue type of each group: its own, else the destination's, else the default. */
export function withQueueTypes(
  groups: readonly GroupTopology[],
  byDestination: Readonly<Record<string, RabbitQueueType>>,
  fallback: RabbitQueueType,
): GroupTopology[] {
  return groups.map((g) => ({ ...g, queueType: g.queueType ?? byDestination[g.destination] ?? fallback }));
}
