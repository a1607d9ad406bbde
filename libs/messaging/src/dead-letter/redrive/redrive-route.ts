import { MessageHeaders } from '../../envelope/message-headers';
import { destinationNames } from '../destination-names';
import { DeadLetterRecord } from './dead-letter-record';
import { NotADeadLetterSourceError } from './errors/not-a-dead-letter-source.error';
import { RedriveTargetRefusedError } from './errors/redrive-target-refused.error';

const DLQ_SUFFIX = '.dlq';
const GROUP = /^[A-Za-z0-9._-]{1,100}$/;
/** Never a redrive target: dead-letter and retry destinations, Kafka's and RabbitMQ's own. */
const FORBIDDEN_TARGET = /^(__.*|_schemas|amq\..*)$|(^|\.)(dlq|retry\.\d+ms)$/;

/** Where a dead-letter destination's messages go back to, and the only group that gets them again. */
export interface RedriveRoute {
  /** The destination the messages failed in (`msg.origin-destination`, matching the source's name). */
  readonly origin: string;
  /** The consumer group that failed them. */
  readonly group: string;
  /** Kafka: the destination topic (other groups skip the copy); RabbitMQ: the group's work queue. */
  readonly target: string;
}

/**
 * The route of a redrive of `source`, derived from its name `<destination>.<group>.dlq` and checked against
 * every record: each must be a dead-letter copy (failure headers present) naming that destination as its
 * origin. A header alone never picks the target (any service that writes the DLQ can plant one).
 * Undefined for an empty source. Throws `NotADeadLetterSourceError` or `RedriveTargetRefusedError`.
 */
export function redriveRoute(
  transport: 'kafka' | 'rabbitmq',
  source: string,
  records: readonly DeadLetterRecord[],
): RedriveRoute | undefined {
  if (!source.endsWith(DLQ_SUFFIX)) {
    throw new NotADeadLetterSourceError(source, "its name does not end in '.dlq'");
  }
  if (records.length === 0) return undefined;
  const origins = new Set<string>();
  for (const record of records) {
    const h = record.wire.headers;
    const origin = h[MessageHeaders.ORIGIN_DESTINATION];
    if (!origin || !h[MessageHeaders.FAILURE_CATEGORY]) {
      throw new NotADeadLetterSourceError(source, 'it holds a message without failure headers');
    }
    origins.add(origin);
  }
  if (origins.size > 1) {
    throw new RedriveTargetRefusedError(source, [...origins].join(', '), 'its messages name several origins');
  }
  const [origin] = origins;
  const group = source.startsWith(`${origin}.`) ? source.slice(origin.length + 1, -DLQ_SUFFIX.length) : '';
  if (!GROUP.test(group) || source !== destinationNames.deadLetter(origin, group)) {
    throw new RedriveTargetRefusedError(
      source,
      origin,
      "the messages' msg.origin-destination is not the destination the DLQ's name derives from",
    );
  }
  const target = transport === 'kafka' ? origin : destinationNames.workQueue(origin, group);
  checkTarget(source, target);
  return { origin, group, target };
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
