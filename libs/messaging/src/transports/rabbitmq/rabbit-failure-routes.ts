import { destinationNames } from '../../topology/destination-names';
import { GroupTopology } from '../../topology/messaging-topology';

/** The default exchange: a publish to it with a queue's name as routing key reaches that queue, any queue. */
export const DEFAULT_EXCHANGE = '';

/**
 * A group's failure exchange and the queues bound to it: its retry tiers and its DLQ, each bound by its own
 * name. Never the work queue, so that a service allowed to write the exchange cannot skip a retry's wait or
 * reach another group's queue.
 */
export interface RabbitFailureRoute {
  readonly exchange: string;
  readonly queues: readonly string[];
}

/** The failure route of a group (`destinationNames.failureExchange`). */
export function failureRouteOf(group: GroupTopology): RabbitFailureRoute {
  const { destination, group: name } = group;
  return {
    exchange: destinationNames.failureExchange(destination, name),
    queues: [
      ...group.retryTiersMs.map((tierMs) => destinationNames.retry(destination, name, tierMs)),
      destinationNames.deadLetter(destination, name),
    ],
  };
}

/**
 * Which exchange a copy for a queue goes through: the failure exchange of the group whose queue it is, once
 * that exchange is known to exist; else the default exchange (an admin's redrive to a work queue or an archive,
 * or a group whose topology an earlier version declared, before failure exchanges).
 */
export class RabbitCopyRoutes {
  private readonly exchanges = new Map<string, string>();

  /** Copies for the route's queues go through its exchange from now on. */
  add(route: RabbitFailureRoute): void {
    for (const queue of route.queues) this.exchanges.set(queue, route.exchange);
  }

  /** The exchange to publish a copy for `queue` to, with the queue's name as routing key. */
  exchangeFor(queue: string): string {
    return this.exchanges.get(queue) ?? DEFAULT_EXCHANGE;
  }
}
