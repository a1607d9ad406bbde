import { z } from 'zod';
import { destinationNames } from './destination-names';

/**
 * A RabbitMQ queue's type: `classic` (one node holds it) or `quorum` (replicated on a majority of the
 * cluster's nodes, RabbitMQ's queue for data safety; a classic queue cannot be turned into one in place).
 */
export type RabbitQueueType = 'classic' | 'quorum';

/** What one consumer group of one destination needs on the broker besides the destination itself. */
export interface GroupTopology {
  /** The consumer group. */
  readonly group: string;
  /** The destination it consumes. */
  readonly destination: string;
  /** Delay tiers of its retry destinations, ms (empty: no retry destination). */
  readonly retryTiersMs: readonly number[];
  /** Type of its work, retry and dead-letter queues (RabbitMQ only). Default: the transport's `queueType`. */
  readonly queueType?: RabbitQueueType;
}

/**
 * The broker objects an application needs: destinations (Kafka topics, RabbitMQ exchanges) and, per consumer
 * group, its work queue (RabbitMQ), retry destinations and dead-letter destination. Declared by an admin
 * (`nest-messaging topology apply --file`), verified by the services at startup.
 */
export interface MessagingTopology {
  /** Destinations (Kafka topics, RabbitMQ exchanges), e.g. the ones the application publishes to. */
  readonly destinations: readonly string[];
  /** Consumer groups, each with its destination and retry tiers. */
  readonly groups: readonly GroupTopology[];
}

const NAME = /^[A-Za-z0-9._-]{1,200}$/;
const name = z.string().regex(NAME, 'must be 1-200 letters, digits, ".", "_" or "-"');
const topologySchema = z.strictObject({
  destinations: z.array(name).default([]),
  groups: z
    .array(
      z.strictObject({
        group: name,
        destination: name,
        retryTiersMs: z.array(z.number().int().positive()).default([]),
        queueType: z.enum(['classic', 'quorum']).optional(),
      }),
    )
    .default([]),
});

/** Reads a topology written as JSON (`nest-messaging topology apply --file`). Throws a `ZodError` if it is not one. */
export function parseMessagingTopology(json: unknown): MessagingTopology {
  return topologySchema.parse(json);
}

/** Every destination the topology names, its groups' included, once each. */
export function destinationsOf(topology: MessagingTopology): string[] {
  return [...new Set([...topology.destinations, ...topology.groups.map((g) => g.destination)])];
}

/** The group's retry destinations, one per tier, and its dead-letter destination. */
export function copyDestinationsOf(group: GroupTopology): string[] {
  return [
    ...group.retryTiersMs.map((tier) => destinationNames.retry(group.destination, group.group, tier)),
    destinationNames.deadLetter(group.destination, group.group),
  ];
}

/** The topology as one line of JSON, for an error message an operator copies into a file. */
export function topologyJson(topology: MessagingTopology): string {
  return JSON.stringify({ destinations: topology.destinations, groups: topology.groups });
}
