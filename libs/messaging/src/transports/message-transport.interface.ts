import { WireMessage } from '../envelope/wire-message';
import { MessagingTopology } from '../topology/messaging-topology';
import { BrokerRefusal } from './broker-refusal';
import { PublishOutcome } from './publish-outcome';
import { TransportCapabilities } from '../retry/transport-capabilities';
import { ConsumerHandle, Subscription } from './delivery-contract';

/** The state of the connection to the broker, for health checks. */
export interface TransportHealth {
  readonly connected: boolean;
  /** The last connection or publish error, while the transport is not healthy. */
  readonly lastError?: string;
  /**
   * Set when the broker refused for good (a login or virtual host refused, an address that is not a Kafka
   * client listener): what to fix, said so. Retrying goes on, but it will not heal by itself.
   */
  readonly refusal?: BrokerRefusal;
}

/** How one publish call may be steered. */
export interface PublishOptions {
  /**
   * Aborted when the caller stops waiting for the outcomes (the relay at its deadline): whatever of the
   * publish has not started yet is not sent (AMBIGUOUS), since a late send would only be a stray copy.
   * Default: none.
   */
  readonly signal?: AbortSignal;
}

/**
 * One broker behind a small interface. Implementations: `KafkaTransport`, `RabbitMqTransport`.
 * Every method may be called while the broker is down: publish then answers REJECTED or AMBIGUOUS per
 * message, and the transport reconnects by itself.
 */
export interface MessageTransport {
  readonly kind: 'kafka' | 'rabbitmq';
  readonly capabilities: TransportCapabilities;

  /** Publishes a batch; resolves with one outcome per message, in order. Never rejects. */
  publish(messages: readonly WireMessage[], options?: PublishOptions): Promise<PublishOutcome[]>;

  /**
   * Publishes dead-letter and retry copies to the group destinations their `destination` names (Kafka:
   * topics; RabbitMQ: queues, through the default exchange). One outcome per copy, in order. Never rejects.
   */
  publishCopies(copies: readonly WireMessage[]): Promise<PublishOutcome[]>;

  /** Starts consuming; resolves once the subscription is set up (topics, queues, bindings). */
  subscribe(subscription: Subscription): Promise<ConsumerHandle>;

  /**
   * Makes sure destinations exist (Kafka topics, RabbitMQ exchanges): declares them in `topology: 'declare'`
   * mode, checks them in `verify` mode (throws `MessagingTopologyMissingError`).
   */
  ensureDestinations(destinations: readonly string[]): Promise<void>;

  /** Declares everything `topology` names that is missing; idempotent (`nest-messaging topology apply`). */
  declareTopology(topology: MessagingTopology): Promise<void>;

  /** What `topology` names that does not exist, described for people; empty when all is there. */
  missingTopology(topology: MessagingTopology): Promise<string[]>;

  /** What the transport last saw, without I/O. */
  health(): TransportHealth;

  /** Asks the broker now (a quick metadata request or connection check) whether it answers. */
  checkHealth(): Promise<TransportHealth>;

  /** Stops consumers and producers and closes connections. */
  close(): Promise<void>;
}
