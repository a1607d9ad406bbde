/**
 * What a transport can do. The retry engine and the startup checks decide on capabilities, never on a
 * transport's name.
 */
export interface TransportCapabilities {
  /** Destinations are ordered streams (per key) that a consumer can pause and rewind (Kafka partitions). */
  readonly orderedStream: boolean;
  /** The broker can hold a message back for a delay before redelivering it (RabbitMQ TTL + DLX tiers). */
  readonly delayedDelivery: boolean;
  /** A consumer can publish failed messages to retry destinations and consume them back (retry topics). */
  readonly retryDestinations: boolean;
}
