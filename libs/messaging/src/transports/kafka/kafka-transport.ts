import { Logger } from '@nestjs/common';
import { Admin, ConfigResourceTypes, Kafka, logLevel } from 'kafkajs';
import { Clock, systemClock } from '../../common/clock';
import { WireMessage } from '../../envelope/wire-message';
import { KafkaProducerClient, KafkaSaslOptions, TopologyMode } from '../../messaging-options.interface';
import { copyDestinationsOf, destinationsOf, MessagingTopology } from '../../topology/messaging-topology';
import { MessagingTopologyMissingError } from '../../topology/messaging-topology-missing.error';
import { MessageTransport, PublishOptions, TransportHealth } from '../message-transport.interface';
import { RefusalLog } from '../broker-refusal';
import { PublishOutcome } from '../publish-outcome';
import { ConsumerHandle, Subscription, topologyOf } from '../subscription.interface';
import { TransportCapabilities } from '../../retry/transport-capabilities';
import { LazyKafkaClient } from './kafka-clients';
import { KafkaPublisher, KafkajsPublisher } from './kafka-publisher';
import { OutageLog } from '../outage-log';
import { durabilityWarnings } from './kafka-durability';
import { kafkaLogCreator } from './kafka-logger';
import { kafkaSasl } from './kafka-sasl';
import { KafkaSubscriber } from './kafka-subscriber';
import { PlatformaticPublisher } from './platformatic-publisher';
import { isUnknownTopic, onceTopicsPropagated } from './topic-propagation';

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

/** The topic setting that bounds a record batch (Kafka's default 1 MiB + 12 bytes, from the broker). */
const MAX_MESSAGE_BYTES = 'max.message.bytes';
/** The topic setting acks=all waits for. */
const MIN_INSYNC_REPLICAS = 'min.insync.replicas';
/** Room for what a dead-letter or retry copy adds to a message: failure headers, a hashed key. */
const COPY_HEADROOM_BYTES = 64 * 1024;

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
  /** The health check's own admin client, kept between checks: a check must not open a client each time. */
  private readonly healthAdmin: LazyKafkaClient<Admin>;
  private readonly knownTopics = new Set<string>();
  /** Topics whose replication was checked at startup (`warnAboutDurability`). */
  private readonly durabilityChecked = new Set<string>();
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
    this.outage = new OutageLog(new Logger('kafkajs'), 'Kafka', clock);
    this.kafka = new Kafka({
      clientId: settings.clientId,
      brokers: [...settings.brokers],
      ssl: settings.ssl ?? false,
      sasl: kafkaSasl(settings.sasl),
      connectionTimeout: settings.connectionTimeoutMs,
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
    // Without retries and with short timeouts: a health check must answer quickly, also when Kafka is down.
    const healthKafka = new Kafka({
      clientId: `${settings.clientId}-health`,
      brokers: [...settings.brokers],
      ssl: settings.ssl ?? false,
      sasl: kafkaSasl(settings.sasl),
      connectionTimeout: 1_000,
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
    await this.createMissingTopics(destinationsOf(topology), async () => []);
    for (const group of topology.groups) {
      await this.ensureCopyDestinations(group.destination, copyDestinationsOf(group));
    }
  }

  async missingTopology(topology: MessagingTopology): Promise<string[]> {
    const needed = [...destinationsOf(topology), ...topology.groups.flatMap(copyDestinationsOf)];
    if (needed.every((t) => this.knownTopics.has(t))) return [];
    const existing = new Set(await (await this.admin.get()).listTopics());
    needed.filter((t) => existing.has(t)).forEach((t) => this.knownTopics.add(t));
    return needed.filter((t) => !existing.has(t)).map((t) => `topic '${t}'`);
  }

  /** Declares the topology (`declare` mode), or checks it and throws `MessagingTopologyMissingError`. */
  async prepareTopology(topology: MessagingTopology): Promise<void> {
    if (this.settings.topology === 'declare') await this.declareTopology(topology);
    else {
      const missing = await this.missingTopology(topology);
      if (missing.length > 0) throw new MessagingTopologyMissingError(this.kind, missing, topology);
    }
    await this.warnAboutDurability([
      ...destinationsOf(topology),
      ...topology.groups.flatMap(copyDestinationsOf),
    ]);
  }

  /**
   * Logs a warning, once per topic, for topics that could lose an acknowledged write (see
   * `durabilityWarnings`). Best effort, once per topic (publishing calls this for every batch): a check
   * that fails (no describe permission) is only a debug line and is not repeated; it never stops a service.
   */
  private async warnAboutDurability(topics: readonly string[]): Promise<void> {
    const unchecked = topics.filter((t) => !this.durabilityChecked.has(t));
    if (unchecked.length === 0) return;
    unchecked.forEach((t) => this.durabilityChecked.add(t));
    try {
      const admin = await this.admin.get();
      const [{ brokers }, { topics: metadata }, configs] = await Promise.all([
        admin.describeCluster(),
        admin.fetchTopicMetadata({ topics: unchecked }),
        onceTopicsPropagated(this.clock, () =>
          admin.describeConfigs({
            includeSynonyms: false,
            resources: unchecked.map((name) => ({
              type: ConfigResourceTypes.TOPIC,
              name,
              configNames: [MIN_INSYNC_REPLICAS],
            })),
          }),
        ),
      ]);
      const minInsync = new Map(
        configs.resources.map((r) => [r.resourceName, Number(r.configEntries[0]?.configValue)]),
      );
      const observed = metadata.map((t) => ({
        topic: t.name,
        replicas: Math.min(...t.partitions.map((p) => p.replicas.length)),
        minInsyncReplicas: Number.isFinite(minInsync.get(t.name)) ? minInsync.get(t.name) : undefined,
      }));
      for (const warning of durabilityWarnings(this.settings.replicationFactor, brokers.length, observed)) {
        this.logger.warn(`Durability: ${warning}.`);
      }
    } catch (error) {
      this.logger.debug(`Could not check the replication of ${unchecked.join(', ')}: ${String(error)}`);
    }
  }

  /**
   * Creates the topics that receive copies of `source`'s messages (its dead-letter and retry topics) so that
   * they take a copy of anything `source` took: `source`'s `max.message.bytes` plus room for the headers a
   * copy adds. With the same limit, a message near it could not be dead-lettered, and since a copy must be
   * confirmed before the source is settled, its partition would wait forever.
   */
  private async ensureCopyDestinations(source: string, copies: readonly string[]): Promise<void> {
    await this.createMissingTopics(copies, async (admin) => {
      // `source` may have been created a moment ago: the broker asked may not know it yet.
      const { resources } = await onceTopicsPropagated(this.clock, () =>
        admin.describeConfigs({
          includeSynonyms: false,
          resources: [{ type: ConfigResourceTypes.TOPIC, name: source, configNames: [MAX_MESSAGE_BYTES] }],
        }),
      );
      const limit = Number(
        resources[0]?.configEntries.find((e) => e.configName === MAX_MESSAGE_BYTES)?.configValue,
      );
      return Number.isFinite(limit)
        ? [{ name: MAX_MESSAGE_BYTES, value: String(limit + COPY_HEADROOM_BYTES) }]
        : [];
    });
  }

  /** Creates those of `topics` not known to exist, with the config entries `configFor` works out once. */
  private async createMissingTopics(
    topics: readonly string[],
    configFor: (admin: Admin) => Promise<Array<{ name: string; value: string }>>,
  ): Promise<void> {
    const missing = topics.filter((t) => !this.knownTopics.has(t));
    if (missing.length === 0) return;
    const admin = await this.admin.get();
    const configEntries = await configFor(admin);
    try {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({
          topic,
          numPartitions: this.settings.numPartitions,
          replicationFactor: this.settings.replicationFactor,
          configEntries,
        })),
      });
    } catch (error) {
      // On a cluster, the broker kafkajs asks for the new topics' leaders may not know them yet (kafkajs
      // only waits out LEADER_NOT_AVAILABLE): the topics were created; wait until every broker knows them.
      if (!isUnknownTopic(error)) throw error;
      await this.awaitTopicLeaders(admin, missing);
    }
    missing.forEach((t) => this.knownTopics.add(t));
  }

  /** Resolves once the metadata names a leader for every partition of `topics`; throws after 30 s. */
  private async awaitTopicLeaders(admin: Admin, topics: readonly string[]): Promise<void> {
    const deadline = this.clock.now() + 30_000;
    for (;;) {
      try {
        const { topics: metadata } = await admin.fetchTopicMetadata({ topics: [...topics] });
        if (metadata.every((t) => t.partitions.every((p) => p.leader >= 0))) return;
      } catch (error) {
        if (this.clock.now() > deadline) throw error;
      }
      if (this.clock.now() > deadline) {
        throw new Error(`Created topics ${topics.join(', ')} have no leader after 30 s.`);
      }
      await this.clock.sleep(200);
    }
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
