import { Logger } from '@nestjs/common';
import { printable } from '../common/printable';
import { isEventTypeName } from '../envelope/event-definition';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { UnhandledTypeAction } from '../messaging-options.interface';

/** Types of one group and destination that get a metric label (and a log line) of their own; later ones share `(other)`. */
export const UNHANDLED_TYPE_LABELS = 50;

/** A delivery whose type its group has no handler for, settled without handling. */
export interface UnhandledDelivery {
  readonly group: string;
  readonly destination: string;
  readonly type: string;
  readonly messageId: string;
}

/** What `group` does with a type it has no handler for: its `unhandledTypesByGroup` entry, else `unhandledTypes`. */
export function unhandledTypeAction(options: ResolvedMessagingOptions, group: string): UnhandledTypeAction {
  const byGroup = options.consumers.unhandledTypesByGroup;
  return Object.hasOwn(byGroup, group) ? byGroup[group] : options.consumers.unhandledTypes;
}

/**
 * Counts messages of types a group has no handler for (`consumers.unhandledTypes: 'settle'`), per type with a
 * bounded label set, and logs each type once per group and destination, so that a topic carrying several
 * event types fills no dead-letter queue and a new type still shows.
 */
export class UnhandledTypes {
  /** Per group and destination, the types seen (at most `UNHANDLED_TYPE_LABELS`). */
  private readonly seen = new Map<string, Set<string>>();

  constructor(
    private readonly metrics: MessagingMetrics,
    private readonly logger: Logger,
  ) {}

  /** Counts the delivery under its type's label, logging the type the first time. */
  count({ group, destination, type, messageId }: UnhandledDelivery): void {
    const label = this.label(group, destination, type, messageId);
    this.metrics.unhandled.inc({ group, destination, type: label });
    this.metrics.consumed.inc({ group, destination, outcome: 'unhandled' });
  }

  private label(group: string, destination: string, type: string, messageId: string): string {
    if (!isEventTypeName(type)) return '(invalid)';
    const where = `${group}\n${destination}`;
    const types = this.seen.get(where) ?? new Set<string>();
    this.seen.set(where, types);
    if (types.has(type)) return type;
    if (types.size >= UNHANDLED_TYPE_LABELS) return '(other)';
    types.add(type);
    this.logger.log(
      `Consumer group ${group} has no handler for ${printable(type)} on ${destination} (first: message ` +
        `${messageId}): such messages are settled unhandled and counted in messaging_consumer_unhandled_total` +
        (types.size === UNHANDLED_TYPE_LABELS
          ? `; this is the ${UNHANDLED_TYPE_LABELS}th such type, later ones are counted as (other) and not logged.`
          : '; logged once per type.'),
    );
    return type;
  }
}
