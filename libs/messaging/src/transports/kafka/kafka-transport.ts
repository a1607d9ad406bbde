import { Logger } from '@nestjs/common';
import { Admin, Kafka, logLevel } from 'kafkajs';
import { Clock, systemClock } from '../../common/clock';
import { WireMessage } from '../../envelope/wire-message';
import { KafkaProducerClient, KafkaSaslOptions, TopologyMode } from '../../messaging-options.interface';
import { MessagingTopology } from '../../topology/messaging-topology';
import { MessageTransport, PublishOptions, TransportHealth } from '../message-transport.interface';
import { RefusalLog } from '../broker-refusal';
import { PublishOutcome } from '../publish-outcome';
import { ConsumerHandle, Subscription, topologyOf } from '../delivery-contract';
import { TransportCapabilities } from '../../retry/transport-capabilities';
import { LazyKafkaClient } from './kafka-clients';
import { noDelaySocketFactory } from './kafka-socket';
import { KafkaPublisher, KafkajsPublisher } from './kafka-publisher';
import { OutageLog } from '../outage-log';
import { kafkaLogCreator } from './kafka-logger';
import { kafkaSasl } from './kafka-sasl';
import { KafkaSubscriber } from './kafka-subscriber';
import { patchKafkajsRequestQueue } from './kafkajs-request-queue.patch';
import { KafkaTopology } from './kafka-topology';
import { PlatformaticPublisher } from './platformatic-publisher';

/** Settings the Kafka transport runs with (validated module options). */
export interface KafkaTransportSettings {
  readonly clientId: string;
  readonly brokers: readonly string[];
  /** SASL login (the service's own principal). Default: none. */
  readonly sasl?: KafkaSaslOptions;
  /** TLS. Default false. */
  readonly ssl?: boolean;
  readonly connectionTimeoutMs: number;
  readonly sessionTimeoutMs: number;
  readonly numPartitions: number;
  readonly replicationFactor: number;
  /** Deliveries handled at once by a consumer (partitions in parallel). */
  readonly concurrency: number;
  /** Create missing topics, or only check that they exist (the default). */
  readonly topology: TopologyMode;
  /** The client that publishes. Default kafkajs. */
  readonly producerClient?: KafkaProducerClient;
}

/**
 * Kafka through kafkajs. Publishing uses one idempotent producer with acks=all: a message is CONFIRMED
 * only when every in-sync replica has it; the producer is kafkajs's or, by option, @platformatic/kafka's
 * (`KafkaPublisher`). Consumers commit offsets themselves (see `KafkaSubscriber`).
 */
export class KafkaTransport implements MessageTransport {
  readonly kind = 'kafka' as const;
  readonly capabilities: TransportCapabilities = {
    orderedStream: true,
    delayedDelivery: false,
    retryDestinations: true,
  };
  private readonly logger = new Logger(KafkaTransport.name);
  private readonly kafka: Kafka;
  private readonly publisher: KafkaPublisher;
  private readonly admin: LazyKafkaClient<Admin>;
  /** The topics: created or checked, sized for copies, their replication checked. */
  private readonly topics: KafkaTopology;
  /** The health check's own admin client, kept between checks: a check must not open a client each time. */
  private readonly healthAdmin: LazyKafkaClient<Admin>;
  private readonly subscribers = new Set<KafkaSubscriber>();
  private connected = false;
  private lastError?: string;
  /** Answers no retry changes (a SASL login refused, an address that is no client listener): said once. */
  private readonly refusals = new RefusalLog('kafka', this.logger);
  /** kafkajs's connection errors, summarised (shared by the producer, the admin and every consumer). */
  private readonly outage: OutageLog;

  constructor(
    private readonly settings: KafkaTransportSettings,
    private readonly clock: Clock = systemClock,
  ) {
    patchKafkajsRequestQueue(); // no negative timeouts (Node 24's TimeoutNegativeWarning), no 1 ms timer loop
    this.outage = new OutageLog(new Logger('kafkajs'), 'Kafka', clock);
    this.kafka = new Kafka({
      clientId: settings.clientId,
      brokers: [...settings.brokers],
      ssl: settings.ssl ?? false,
      sasl: kafkaSasl(settings.sasl),
      connectionTimeout: settings.connectionTimeoutMs,
      socketFactory: noDelaySocketFactory,
      requestTimeout: 10_000,
      retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 2_000 },
      logLevel: logLevel.WARN,
      logCreator: kafkaLogCreator('kafkajs', this.outage),
    });
    this.publisher =
      settings.producerClient === 'platformatic'
        ? new PlatformaticPublisher(settings)
        : new KafkajsPublisher(this.kafka);
    this.admin = new LazyKafkaClient(() => this.kafka.admin());
    this.topics = new KafkaTopology(this.admin, settings, clock, this.logger);
    // Without retries and with short timeouts: a health check must answer quickly, also when Kafka is down.
    const healthKafka = new Kafka({
      clientId: `${settings.clientId}-health`,
      brokers: [...settings.brokers],
      ssl: settings.ssl ?? false,
      sasl: kafkaSasl(settings.sasl),
      connectionTimeout: 1_000,
      socketFactory: noDelaySocketFactory,
      requestTimeout: 2_000,
      retry: { retries: 0 },
      logLevel: logLevel.NOTHING,
    });
    this.healthAdmin = new LazyKafkaClient(() => healthKafka.admin());
  }

  /** The raw kafkajs client: an escape hatch. */
  get client(): Kafka {
    return this.kafka;
  }

  async publish(messages: readonly WireMessage[], options: PublishOptions = {}): Promise<PublishOutcome[]> {
    if (messages.length === 0) return [];
    try {
      await this.publisher.connect();
      await this.ensureDestinations([...new Set(messages.map((m) => m.destination))]);
    } catch (error) {
      this.markDown(error);
      return messages.map(() => ({ status: 'REJECTED', error: asError(error) }));
    }

    // One request per topic, so that one topic's failure does not hide another's success.
    const byTopic = new Map<string, number[]>();
    messages.forEach((m, i) => byTopic.set(m.destination, [...(byTopic.get(m.destination) ?? []), i]));
    const outcomes: PublishOutcome[] = new Array<PublishOutcome>(messages.length);
    await Promise.all(
      [...byTopic].map(async ([topic, indexes]) => {
        const outcome = await this.publisher.send(
          topic,
          indexes.map((i) => messages[i]),
          options.signal,
        );
        indexes.forEach((i) => (outcomes[i] = outcome));
      }),
    );
    if (outcomes.every((o) => o.status === 'CONFIRMED')) {
      this.connected = true;
      this.refusals.recovered();
      this.lastError = undefined;
      this.outage.recovered();
    } else {
      const failure = outcomes.find((o) => o.status !== 'CONFIRMED') as Exclude<
        PublishOutcome,
        { status: 'CONFIRMED' }
      >;
      this.markDown(failure.error); // the publisher replaced its producer (a new producer id)
    }
    return outcomes;
  }

  /** Copies go to topics like any message (the dead-letter and retry topics exist once subscribed). */
  publishCopies(copies: readonly WireMessage[]): Promise<PublishOutcome[]> {
    return this.publish(copies);
  }

  async ensureDestinations(destinations: readonly string[]): Promise<void> {
    await this.prepareTopology({ destinations, groups: [] });
  }

  async declareTopology(topology: MessagingTopology): Promise<void> {
    await this.topics.declare(topology);
  }

  async missingTopology(topology: MessagingTopology): Promise<string[]> {
    return this.topics.missing(topology);
  }

  /** Declares the topology (`declare` mode), or checks it and throws `MessagingTopologyMissingError`. */
  async prepareTopology(topology: MessagingTopology): Promise<void> {
    await this.topics.prepare(topology);
  }

  async subscribe(subscription: Subscription): Promise<ConsumerHandle> {
    await this.prepareTopology(topologyOf(subscription));
    const subscriber = new KafkaSubscriber(
      {
        kafka: this.kafka,
        sessionTimeoutMs: this.settings.sessionTimeoutMs,
        log: this.logger,
        clock: this.clock,
        outage: this.outage,
      },
      subscription,
    );
    this.subscribers.add(subscriber);
    await subscriber.start();
    return {
      joined: subscriber.joined,
      stop: async () => {
        this.subscribers.delete(subscriber);
        await subscriber.stop();
      },
    };
  }

  health(): TransportHealth {
    return { connected: this.connected, lastError: this.lastError, refusal: this.refusals.current };
  }

  async checkHealth(): Promise<TransportHealth> {
    try {
      await (await this.healthAdmin.get()).describeCluster();
      this.refusals.recovered();
      return { connected: true };
    } catch (error) {
      await this.healthAdmin.reset(); // the next check connects afresh
      const refusal = this.refusals.failure(error);
      return { connected: false, lastError: asError(error).message, refusal };
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscribers].map((s) => s.stop()));
    this.subscribers.clear();
    await this.publisher.close();
    await this.admin.reset();
    await this.healthAdmin.reset();
  }

  private markDown(error: unknown): void {
    this.connected = false;
    this.lastError = asError(error).message;
    this.refusals.failure(error);
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
