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
 * A destination's journal (RabbitMQ only, opt-in): a stream queue `destinationNames.journal(destination)`
 * bound to the destination's exchange like a work queue, so it keeps a copy of every message published to
 * the destination for its retention; what a replay of a window reads (docs/guide/08-redrive.md). Kafka
 * ignores it: a topic is its own journal.
 */
export interface JournalTopology {
  /** The destination whose messages it keeps. */
  readonly destination: string;
  /** How long it keeps them (`x-max-age`): a number and a unit, `Y`, `M`, `D`, `h`, `m` or `s`, e.g. `7D`. */
  readonly maxAge?: string;
  /** At most this many bytes kept (`x-max-length-bytes`); the oldest segments go first. */
  readonly maxLengthBytes?: number;
}

/**
 * The broker objects an application needs: destinations (Kafka topics, RabbitMQ exchanges) and, per consumer
 * group, its work queue (RabbitMQ), retry destinations and dead-letter destination; on RabbitMQ, the journals
 * asked for. Declared by an admin (`nest-messaging topology apply --file`), verified by the services at startup.
 */
export interface MessagingTopology {
  /** Destinations (Kafka topics, RabbitMQ exchanges), e.g. the ones the application publishes to. */
  readonly destinations: readonly string[];
  /** Consumer groups, each with its destination and retry tiers. */
  readonly groups: readonly GroupTopology[];
  /** RabbitMQ: destinations that keep a journal for replay (`JournalTopology`). Default none. */
  readonly journals?: readonly JournalTopology[];
}

const NAME = /^[A-Za-z0-9._-]{1,200}$/;
const name = z.string().regex(NAME, 'must be 1-200 letters, digits, ".", "_" or "-"');
/** A stream's `x-max-age`: a whole number and one of RabbitMQ's units. */
export const JOURNAL_MAX_AGE = /^[1-9]\d*[YMDhms]$/;
const journalSchema = z.strictObject({
  destination: name,
  maxAge: z
    .string()
    .regex(JOURNAL_MAX_AGE, "must be a number and a unit (Y, M, D, h, m, s), e.g. '7D'")
    .optional(),
  maxLengthBytes: z.number().int().positive().optional(),
});
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
  journals: z.array(journalSchema).optional(),
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
  const { destinations, groups, journals } = topology;
  return JSON.stringify({ destinations, groups, ...(journals?.length ? { journals } : {}) });
}
