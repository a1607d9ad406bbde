import { MessageHeaders } from '../envelope/message-headers';
import { MessagingTopology } from '../topology/messaging-topology';
import { deadLetterSplits, DeadLetterSplit, destinationNames } from '../topology/destination-names';
import { DeadLetterRecord } from './dead-letter-record';
import { AmbiguousRedriveRouteError } from './errors/ambiguous-redrive-route.error';
import { NotADeadLetterSourceError } from './errors/not-a-dead-letter-source.error';
import { RedriveTargetRefusedError } from './errors/redrive-target-refused.error';

const GROUP = /^[A-Za-z0-9._-]{1,100}$/;
/** Never a redrive target: dead-letter and retry destinations, Kafka's and RabbitMQ's own. */
const FORBIDDEN_TARGET = /^(__.*|_schemas|amq\..*)$|(^|\.)(dlq|retry\.\d+ms)$/;

/** Where a dead-letter destination's messages go back to, and the only group that gets them again. */
export interface RedriveRoute {
  /** The destination the messages failed in (each one's `msg.origin-destination` must name it). */
  readonly origin: string;
  /** The consumer group that failed them. */
  readonly group: string;
  /** Kafka: the destination topic (other groups skip the copy); RabbitMQ: the group's work queue. */
  readonly target: string;
}

/**
 * The route of a redrive of `source`, from its name `<destination>.<group>.dlq` alone, or from the
 * topology's group whose dead-letter destination it is when `topology` is given. Never from a message
 * header (any service that writes the DLQ can plant one). A name that reads two ways (dots in the names)
 * needs the topology. Throws `NotADeadLetterSourceError`, `AmbiguousRedriveRouteError` or
 * `RedriveTargetRefusedError`.
 */
export function deriveRoute(
  transport: 'kafka' | 'rabbitmq',
  source: string,
  topology?: MessagingTopology,
): RedriveRoute {
  const splits = deadLetterSplits(source).filter((s) => GROUP.test(s.group));
  if (splits.length === 0) {
    throw new NotADeadLetterSourceError(source, "its name is not '<destination>.<group>.dlq'");
  }
  let split: DeadLetterSplit;
  if (topology) {
    const groups = topology.groups.filter(
      (g) => destinationNames.deadLetter(g.destination, g.group) === source,
    );
    if (groups.length === 0) {
      throw new NotADeadLetterSourceError(
        source,
        'the topology names no group whose dead-letter destination it is',
      );
    }
    if (groups.length > 1) throw new AmbiguousRedriveRouteError(source, groups.map(reading));
    split = groups[0];
  } else {
    if (splits.length > 1) throw new AmbiguousRedriveRouteError(source, splits.map(reading));
    split = splits[0];
  }
  const target =
    transport === 'kafka' ? split.destination : destinationNames.workQueue(split.destination, split.group);
  checkTarget(source, target);
  return { origin: split.destination, group: split.group, target };
}

/**
 * Checks that every record read from `source` is a dead-letter copy (failure headers present) that failed in
 * the route's destination. Throws `NotADeadLetterSourceError` or `RedriveTargetRefusedError`.
 */
export function checkRecords(
  source: string,
  route: RedriveRoute,
  records: readonly DeadLetterRecord[],
): void {
  for (const record of records) {
    const h = record.wire.headers;
    const origin = h[MessageHeaders.ORIGIN_DESTINATION];
    if (!origin || !h[MessageHeaders.FAILURE_CATEGORY]) {
      throw new NotADeadLetterSourceError(source, 'it holds a message without failure headers');
    }
    if (origin !== route.origin) {
      throw new RedriveTargetRefusedError(
        source,
        origin,
        `a message's msg.origin-destination is not '${route.origin}', the destination the DLQ is for`,
      );
    }
  }
}

/** Refuses a target that is a dead-letter or retry destination, or a broker's own. */
export function checkTarget(source: string, target: string): void {
  if (FORBIDDEN_TARGET.test(target)) {
    throw new RedriveTargetRefusedError(
      source,
      target,
      'a dead-letter, retry or broker-internal destination is never a target',
    );
  }
}

/** How a split reads in a refusal: `shop + orders.billing`. */
function reading(split: DeadLetterSplit): string {
  return `${split.destination} + ${split.group}`;
}
