import { WireMessage } from '../envelope/wire-message';
import { MessagingTopology } from '../topology/messaging-topology';

// The contract between a transport and the consumer pipeline: what a consumer group subscribes to
// (`Subscription`), what a transport hands over (`Delivery`, `DeliveryControl`) and how the pipeline answers
// (`Settlement`), with the few functions both sides share.

/** Where a delivery came from, for the handler's context and for logs. */
export interface DeliveryOrigin {
  /** Kafka topic or RabbitMQ queue the delivery was read from. */
  readonly source: string;
  readonly partition?: number;
  readonly offset?: string;
  readonly deliveryTag?: number;
  /** The broker says it delivered this message before (RabbitMQ `redelivered`). */
  readonly redelivered?: boolean;
  /**
   * Set when the delivery came back from one of the group's retry destinations: that destination's delay
   * tier (ms). Only then are the failure headers it carries its own history; on the destination itself any
   * producer could have set them.
   */
  readonly retryTierMs?: number;
}

/** One message handed by a transport to the consumer pipeline (which counts its attempts). */
export interface Delivery {
  readonly wire: WireMessage;
  readonly origin: DeliveryOrigin;
}

/**
 * How a delivery ends, the same on every transport. The pipeline decides it (and publishes any dead-letter
 * or retry copy, confirmed, before answering ACK); the transport only applies it.
 */
export type Settlement =
  /** Handled, a harmless duplicate, or its copy confirmed: commit the offset / ack. */
  | { readonly kind: 'ACK' }
  /** Dropped without a copy (a policy chose REJECT): commit the offset / nack without requeue. */
  | { readonly kind: 'DROP' }
  /** Keep it in place and deliver it again after `delayMs`; later messages of the stream wait (Kafka). */
  | { readonly kind: 'PAUSE'; readonly delayMs: number }
  /** Not settled (the consumer stopped first): the broker delivers it again. */
  | { readonly kind: 'LEAVE' };

/** What a transport lends the pipeline while it handles one delivery. */
export interface DeliveryControl {
  /** Tells the broker the consumer is alive during a long wait (Kafka heartbeat). */
  keepAlive(): Promise<void>;
  /** True once the consumer is stopping: waits and unconfirmed copies give up, the delivery is left. */
  isStopping(): boolean;
  /**
   * Batches only: true once the transport takes no more settlements of this batch's later deliveries (a
   * Kafka partition is held): the rest is left, for the redelivery.
   */
  isHalted?(): boolean;
  /**
   * Deliveries a consumer parked in the service's database (tenants on, `TenantParking`), handed over again:
   * they are never parked a second time.
   */
  readonly replaying?: boolean;
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
  /**
   * Handles deliveries that must not run side by side (one lane: their keys hash alike), in order, and
   * says how to settle each, in the same order; a PAUSE or LEAVE leaves the rest. Lets the consumer share
   * one database transaction between them.
   */
  readonly onDeliveries: (deliveries: readonly Delivery[], control: DeliveryControl) => Promise<Settlement[]>;
}

/**
 * The lane of a key among `lanes`: one key always the same lane (so its messages keep their order), keys
 * spread evenly (FNV-1a).
 */
export function laneOf(key: string, lanes: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % lanes;
}

/** Where a delivery runs: its lane, and the share whose handler slots the lane takes (`KeyedLanes`). */
export interface DeliveryLane {
  readonly lane: string;
  readonly share: string;
}

/**
 * The lane of a delivery of `key` among `lanes` per share, and its share. With tenants on, each tenant (the
 * tenant header the relay stamped) has lanes and handler slots of its own, so a tenant whose database does
 * not answer holds its own deliveries only, never another tenant's that hash alike. The header is read here
 * unverified, to schedule the delivery and nothing else: the pipeline checks its signature before anything
 * is applied, and a forged one moves a message into another lane, never into another tenant's database.
 */
export function deliveryLane(key: string, tenant: string | undefined, lanes: number): DeliveryLane {
  const share = tenant ?? '';
  return { lane: `${share}\u0000${laneOf(key, lanes)}`, share };
}

/** A running subscription. */
export interface ConsumerHandle {
  /** Stops fetching, waits for in-flight deliveries, commits what is done and disconnects. */
  stop(): Promise<void>;
  /**
   * Settles once the consumer receives deliveries: Kafka's consumer has joined its group (which waits for the
   * group's other members, a killed one's session to expire), in the background after `subscribe()` returned.
   * Absent: it receives them as soon as `subscribe()` returns (RabbitMQ).
   */
  readonly joined?: Promise<void>;
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
