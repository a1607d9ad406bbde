import type { DeadLetterCopyPolicy } from '../dead-letter/failure-copy';
import { WireMessage } from '../envelope/wire-message';
import { MessagingTopology } from '../topology/messaging-topology';

/** Where a delivery came from, for the handler's context and for logs. */
export interface DeliveryOrigin {
  /** Kafka topic or RabbitMQ queue the delivery was read from. */
  readonly source: string;
  readonly partition?: number;
  readonly offset?: string;
  readonly deliveryTag?: number;
  /** The broker says it delivered this message before (RabbitMQ `redelivered`). */
  readonly redelivered?: boolean;
}

/** One message handed by a transport to the consumer pipeline. */
export interface Delivery {
  readonly wire: WireMessage;
  /** 1-based delivery attempt, carried across retry destinations in `msg.retry-attempt`. */
  readonly attempt: number;
  readonly origin: DeliveryOrigin;
}

/** Headers a dead-lettered or retried message gets (spec §3: only these reserved names). */
export type FailureHeaders = Readonly<Record<string, string>>;

/**
 * How the pipeline settles a delivery. Each call resolves once the broker side is done; publish-based
 * actions settle the source only after the broker confirmed the new copy (publish → confirm → settle).
 */
export interface DeliveryActions {
  /** Handled, or a harmless duplicate: commit the offset / ack. */
  ack(): Promise<void>;
  /** Park the message in the group's dead-letter destination, then settle the source. */
  deadLetter(headers: FailureHeaders): Promise<void>;
  /** Publish to the retry destination of the tier, due at `dueAt`; then settle the source. */
  retryLater(tierMs: number, dueAt: Date, headers: FailureHeaders): Promise<void>;
  /** Keep the message in place and deliver it again after `delayMs`; later messages of the stream wait. */
  pauseAndRetry(delayMs: number): Promise<void>;
  /** Drop the message without a dead-letter copy (a policy chose REJECT). */
  reject(): Promise<void>;
  /** Tell the broker the consumer is alive during a long wait (Kafka heartbeat). */
  keepAlive(): Promise<void>;
}

/** A consumer group's subscription to destinations. */
export interface Subscription {
  /** Consumer group: a Kafka group id; on RabbitMQ part of the queue names. */
  readonly group: string;
  readonly destinations: readonly string[];
  /** Delay tiers (ms) that need retry destinations, per destination. */
  readonly retryTiers: Readonly<Record<string, readonly number[]>>;
  /** Deliveries handled at once, of different keys (one key's deliveries never overlap). */
  readonly concurrency: number;
  /** What dead-letter copies keep (allowlisted headers, keyed pseudonym of the key). */
  readonly deadLetter: DeadLetterCopyPolicy;
  /**
   * Handles one delivery and settles it through `actions`. A delivery left without any action (the
   * consumer is stopping) stays unsettled: the broker delivers it again.
   */
  readonly onDelivery: (delivery: Delivery, actions: DeliveryActions) => Promise<void>;
}

/** A running subscription. */
export interface ConsumerHandle {
  /** Stops fetching, waits for in-flight deliveries, commits what is done and disconnects. */
  stop(): Promise<void>;
}

/** What a subscription needs on the broker: its destinations, and per destination the group's queues. */
export function topologyOf(subscription: Subscription): MessagingTopology {
  return {
    destinations: subscription.destinations,
    groups: subscription.destinations.map((destination) => ({
      group: subscription.group,
      destination,
      retryTiersMs: subscription.retryTiers[destination] ?? [],
    })),
  };
}
