import { Logger } from '@nestjs/common';
import { Admin, ConfigResourceTypes } from 'kafkajs';
import { Clock } from '../../common/clock';
import { TopologyMode } from '../../messaging-options.interface';
import { copyDestinationsOf, destinationsOf, MessagingTopology } from '../../topology/messaging-topology';
import { MessagingTopologyMissingError } from '../../topology/messaging-topology-missing.error';
import { LazyKafkaClient } from './kafka-clients';
import { durabilityWarnings } from './kafka-durability';
import { isUnknownTopic, onceTopicsPropagated } from './topic-propagation';

/** The topic settings the topology is declared with. */
export interface KafkaTopologySettings {
  /** Create missing topics, or only check that they exist. */
  readonly topology: TopologyMode;
  readonly numPartitions: number;
  readonly replicationFactor: number;
}

/** The topic setting that bounds a record batch (Kafka's default 1 MiB + 12 bytes, from the broker). */
const MAX_MESSAGE_BYTES = 'max.message.bytes';
/** The topic setting acks=all waits for. */
const MIN_INSYNC_REPLICAS = 'min.insync.replicas';
/** Room for what a dead-letter or retry copy adds to a message: failure headers, a hashed key. */
const COPY_HEADROOM_BYTES = 64 * 1024;

/**
 * The Kafka topics a transport publishes to and consumes from (the counterpart of `RabbitTopology`):
 * creates the missing ones (`declare` mode) or checks that they exist, sizes the dead-letter and retry
 * topics for copies, and warns once per topic about replication that could lose an acknowledged write.
 */
export class KafkaTopology {
  private readonly knownTopics = new Set<string>();
  /** Topics whose replication was checked at startup (`warnAboutDurability`). */
  private readonly durabilityChecked = new Set<string>();

  constructor(
    private readonly admin: LazyKafkaClient<Admin>,
    private readonly settings: KafkaTopologySettings,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Creates the topics the topology names that do not exist yet. */
  async declare(topology: MessagingTopology): Promise<void> {
    await this.createMissingTopics(destinationsOf(topology), async () => []);
    for (const group of topology.groups) {
      await this.ensureCopyDestinations(group.destination, copyDestinationsOf(group));
    }
  }

  /** The topics the topology names that do not exist, as `topic 'name'`. */
  async missing(topology: MessagingTopology): Promise<string[]> {
    const needed = [...destinationsOf(topology), ...topology.groups.flatMap(copyDestinationsOf)];
    if (needed.every((t) => this.knownTopics.has(t))) return [];
    const existing = new Set(await (await this.admin.get()).listTopics());
    needed.filter((t) => existing.has(t)).forEach((t) => this.knownTopics.add(t));
    return needed.filter((t) => !existing.has(t)).map((t) => `topic '${t}'`);
  }

  /** Declares the topology (`declare` mode), or checks it and throws `MessagingTopologyMissingError`. */
  async prepare(topology: MessagingTopology): Promise<void> {
    if (this.settings.topology === 'declare') await this.declare(topology);
    else {
      const missing = await this.missing(topology);
      if (missing.length > 0) throw new MessagingTopologyMissingError('kafka', missing, topology);
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
}
