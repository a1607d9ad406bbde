import * as amqp from 'amqplib';
import { destinationNames } from '../../topology/destination-names';
import { GroupTopology, MessagingTopology, destinationsOf } from '../../topology/messaging-topology';
import { MessagingTopologyMismatchError } from '../../topology/messaging-topology-mismatch.error';
import { TopologyMode } from '../../messaging-options.interface';
import {
  DELIVERY_LIMIT_ARGUMENTS,
  deliveryLimitPolicy,
  journalQueueSpec,
  RabbitGroupTopology,
  RabbitQueueSpec,
  rabbitQueuesOf,
} from './rabbit-queue-arguments';
import { failureRouteOf } from './rabbit-failure-routes';

/** AMQP reply code for NOT_FOUND (a passive declare of something that does not exist). */
const NOT_FOUND = 404;
/** AMQP reply code for ACCESS_REFUSED (no configure permission on the object). */
const ACCESS_REFUSED = 403;
/** AMQP reply code for PRECONDITION_FAILED (declared again with other arguments). */
const PRECONDITION_FAILED = 406;

/**
 * Makes sure the exchanges a publisher uses exist, once per channel: declares them (`declare` mode) or only
 * checks them passively (`verify`: a missing one closes the channel, and the publish fails).
 */
export class RabbitTopology {
  private readonly known = new Set<string>();

  constructor(
    private readonly channel: amqp.Channel,
    private readonly mode: TopologyMode,
  ) {}

  /** A durable topic exchange per destination; routing keys are event types. */
  async exchanges(names: readonly string[]): Promise<void> {
    for (const name of names) {
      if (this.known.has(name)) continue;
      if (this.mode === 'declare') await this.channel.assertExchange(name, 'topic', { durable: true });
      else await this.channel.checkExchange(name);
      this.known.add(name);
    }
  }
}

/**
 * Declares the topology (idempotent): per destination a durable topic exchange; per journal its stream queue
 * bound with `#` to the destination's exchange (`journalQueueSpec`); per group its work queue bound
 * with `#`, its dead-letter queue, one retry queue per delay tier whose `x-message-ttl` dead-letters back to
 * the work queue (one queue per delay: TTLs expire at the head), and its failure exchange (direct) bound to the
 * retry queues and the DLQ, through which its copies go (`failureRouteOf`). Queues are classic or quorum by the group's
 * `queueType`, quorum ones with a delivery limit unless listed in `withoutDeliveryLimit` (see
 * `rabbitQueueSpec`). A queue that exists with other arguments (another type) throws
 * `MessagingTopologyMismatchError`; the broker closes `channel`.
 */
export async function declareRabbitTopology(
  channel: amqp.Channel,
  topology: MessagingTopology,
): Promise<void> {
  for (const destination of destinationsOf(topology)) {
    await channel.assertExchange(destination, 'topic', { durable: true });
  }
  for (const group of topology.groups as readonly RabbitGroupTopology[]) {
    for (const queue of rabbitQueuesOf(group)) {
      try {
        await channel.assertQueue(queue.name, { durable: true, arguments: queue.arguments });
      } catch (error) {
        if (codeOf(error) !== PRECONDITION_FAILED) throw error;
        throw new MessagingTopologyMismatchError('rabbitmq', [mismatchOf(queue, group, error)]);
      }
    }
    await channel.bindQueue(
      destinationNames.workQueue(group.destination, group.group),
      group.destination,
      '#',
    );
    const route = failureRouteOf(group);
    await channel.assertExchange(route.exchange, 'direct', { durable: true });
    for (const queue of route.queues) await channel.bindQueue(queue, route.exchange, queue);
  }
  for (const journal of topology.journals ?? []) {
    const queue = journalQueueSpec(journal);
    await channel.assertExchange(journal.destination, 'topic', { durable: true });
    try {
      await channel.assertQueue(queue.name, { durable: true, arguments: queue.arguments });
    } catch (error) {
      if (codeOf(error) !== PRECONDITION_FAILED) throw error;
      throw new MessagingTopologyMismatchError('rabbitmq', [journalMismatchOf(queue, error)]);
    }
    await channel.bindQueue(queue.name, journal.destination, '#');
  }
}

/** What a check of the topology found: what is missing, what differs, what could not be compared. */
export interface RabbitTopologyFindings {
  /** Objects that do not exist, e.g. `queue 'orders.billing.dlq'`. */
  readonly missing: string[];
  /** Queues that exist with other arguments (another type, another TTL). */
  readonly mismatched: string[];
  /** Queues whose arguments could not be compared: the user may not configure them. */
  readonly unchecked: string[];
  /**
   * Quorum queues declared, by an earlier version, without the delivery limit and its dead-letter route but
   * otherwise as expected, each with the policy that gives them both.
   */
  readonly withoutDeliveryLimit: Array<{ readonly queue: string; readonly policy: string }>;
  /**
   * Failure exchanges that do not exist: the topology was declared by a version before them. Until an admin
   * applies the topology again, those groups' copies go through the default exchange.
   */
  readonly withoutFailureExchange: string[];
}

/**
 * Checks the topology without changing it. Existence is checked passively (no permission to configure
 * anything is needed). The arguments of an existing queue (its type, its TTL) can only be compared over
 * AMQP by declaring it again with the expected ones, which changes nothing when they match and fails when
 * they differ; a user without configure permission on the queue gets `unchecked` instead. Bindings cannot be
 * checked over AMQP; `nest-messaging topology apply` declares them.
 */
export async function inspectRabbitTopology(
  model: amqp.ChannelModel,
  topology: MessagingTopology,
): Promise<RabbitTopologyFindings> {
  const findings: RabbitTopologyFindings = {
    missing: [],
    mismatched: [],
    unchecked: [],
    withoutDeliveryLimit: [],
    withoutFailureExchange: [],
  };
  for (const destination of destinationsOf(topology)) {
    if ((await onOwnChannel(model, (c) => c.checkExchange(destination))) === NOT_FOUND)
      findings.missing.push(`exchange '${destination}'`);
  }
  for (const group of topology.groups) {
    const { exchange } = failureRouteOf(group);
    if ((await onOwnChannel(model, (c) => c.checkExchange(exchange))) === NOT_FOUND)
      findings.withoutFailureExchange.push(exchange);
    for (const queue of rabbitQueuesOf(group)) {
      if ((await onOwnChannel(model, (c) => c.checkQueue(queue.name))) === NOT_FOUND) {
        findings.missing.push(`queue '${queue.name}'`);
        continue;
      }
      const outcome = await onOwnChannel(model, (c) =>
        c.assertQueue(queue.name, { durable: true, arguments: queue.arguments }),
      );
      if (outcome === ACCESS_REFUSED) findings.unchecked.push(queue.name);
      else if (outcome === true) continue;
      else if (outcome === NOT_FOUND) findings.missing.push(`queue '${queue.name}'`);
      else {
        const legacy = await withLegacyArguments(model, queue, outcome);
        if (legacy === true) {
          findings.withoutDeliveryLimit.push({ queue: queue.name, policy: deliveryLimitPolicy(queue) });
        } else findings.mismatched.push(mismatchOf(queue, group, legacy ?? outcome));
      }
    }
  }
  for (const journal of topology.journals ?? []) {
    const queue = journalQueueSpec(journal);
    if ((await onOwnChannel(model, (c) => c.checkQueue(queue.name))) === NOT_FOUND) {
      findings.missing.push(`stream '${queue.name}'`);
      continue;
    }
    const outcome = await onOwnChannel(model, (c) =>
      c.assertQueue(queue.name, { durable: true, arguments: queue.arguments }),
    );
    if (outcome === ACCESS_REFUSED) findings.unchecked.push(queue.name);
    else if (outcome === NOT_FOUND) findings.missing.push(`stream '${queue.name}'`);
    else if (outcome !== true) findings.mismatched.push(journalMismatchOf(queue, outcome));
  }
  return findings;
}

/**
 * For a quorum queue that refused its arguments for lacking one of the delivery limit's (the broker names it,
 * and says the queue has none): the outcome of declaring it with the arguments it had before, true when it
 * takes them (an error of its own, its type say, otherwise). Undefined for any other refusal.
 */
async function withLegacyArguments(
  model: amqp.ChannelModel,
  queue: RabbitQueueSpec,
  refusal: Error,
): Promise<true | Error | undefined> {
  const legacy = queue.legacyArguments;
  const said = /inequivalent arg '([^']+)'.*current is none/.exec(refusal.message);
  if (!legacy || !said || !DELIVERY_LIMIT_ARGUMENTS.includes(said[1])) return undefined;
  const outcome = await onOwnChannel(model, (c) =>
    c.assertQueue(queue.name, { durable: true, arguments: legacy }),
  );
  return outcome === true || outcome instanceof Error ? outcome : undefined;
}

/** One line for a queue whose arguments differ, with the broker's own words on what. */
function mismatchOf(queue: RabbitQueueSpec, group: GroupTopology, error: unknown): string {
  const said = /inequivalent arg[^"]*/.exec(error instanceof Error ? error.message : String(error));
  return `queue '${queue.name}' (expected ${group.queueType ?? 'classic'}): ${said?.[0] ?? String(error)}`;
}

/** One line for a journal declared with other arguments (not a stream, another retention). */
function journalMismatchOf(queue: RabbitQueueSpec, error: unknown): string {
  const said = /inequivalent arg[^"]*/.exec(error instanceof Error ? error.message : String(error));
  return `journal '${queue.name}' (expected a stream, ${JSON.stringify(queue.arguments)}): ${said?.[0] ?? String(error)}`;
}

/**
 * Runs a check on a channel of its own (a failed one closes its channel): true, or the reply code
 * NOT_FOUND or ACCESS_REFUSED, or the PRECONDITION_FAILED error itself; any other error is thrown.
 */
async function onOwnChannel(
  model: amqp.ChannelModel,
  check: (channel: amqp.Channel) => Promise<unknown>,
): Promise<true | typeof NOT_FOUND | typeof ACCESS_REFUSED | Error> {
  const channel = await model.createChannel();
  channel.on('error', () => undefined);
  try {
    await check(channel);
    return true;
  } catch (error) {
    const code = codeOf(error);
    if (code === NOT_FOUND || code === ACCESS_REFUSED) return code;
    if (code === PRECONDITION_FAILED) return error as Error;
    throw error;
  } finally {
    await channel.close().catch(() => undefined);
  }
}

function codeOf(error: unknown): unknown {
  return (error as { code?: unknown } | undefined)?.code;
}
