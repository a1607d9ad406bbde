import { mkdtempSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel, PartitionAssigners } from 'kafkajs';
import { KafkaBroker, KafkaClusterMember, newClusterId } from './kafka-broker';
import { freePort } from './ports';

/** Replicas and `min.insync.replicas` of the cluster: production's shape. */
export const CLUSTER_REPLICATION = { replicationFactor: 3, minInsyncReplicas: 2 } as const;

/** The `node.id` of the first dedicated controller (brokers are 1, 2, 3…). */
const FIRST_CONTROLLER_ID = 101;

/**
 * Issue 19: a three-node Kafka KRaft cluster of a suite's (or the demo's) own, replication factor 3 and
 * `min.insync.replicas` 2 for every topic, internal ones included. By default three JVMs, each broker and
 * controller (a controller quorum of three); with `controllers`, that many controllers of their own beside
 * the brokers (Kafka's advice for production: a broker's death then never takes the active controller with
 * it, issue 32). Small heaps; a suite kills and restarts its brokers. The shared broker on 9092 is untouched.
 */
export class KafkaCluster {
  private constructor(
    /** The brokers (combined nodes without dedicated controllers); `node.id` 1, 2, 3… */
    readonly nodes: readonly KafkaBroker[],
    /** The dedicated controllers, if any; `node.id` 101, 102… */
    readonly controllers: readonly KafkaBroker[],
  ) {}

  static async start(size = 3, options: { controllers?: number } = {}): Promise<KafkaCluster> {
    const dedicated = options.controllers ?? 0;
    const node = async (nodeId: number) => ({
      nodeId,
      port: await freePort(),
      controllerPort: await freePort(),
    });
    const brokers = [];
    for (let i = 1; i <= size; i++) brokers.push(await node(i));
    const controllers = [];
    for (let i = 0; i < dedicated; i++) controllers.push(await node(FIRST_CONTROLLER_ID + i));
    const voters = (dedicated > 0 ? controllers : brokers)
      .map((p) => `${p.nodeId}@127.0.0.1:${p.controllerPort}`)
      .join(',');
    const clusterId = newClusterId();
    const make = (
      { nodeId, ...ports }: { nodeId: number; port: number; controllerPort: number },
      roles: KafkaClusterMember['roles'],
      heap: string,
    ) =>
      new KafkaBroker({
        ...ports,
        stateDir: mkdtempSync(path.join(os.tmpdir(), `kafka-cluster${nodeId}-`)),
        heap,
        cluster: { nodeId, roles, voters, clusterId, ...CLUSTER_REPLICATION },
      });
    const nodes = brokers.map((p) => make(p, dedicated > 0 ? 'broker' : 'broker,controller', '384m'));
    const quorum = controllers.map((p) => make(p, 'controller', '256m'));
    const all = [...quorum, ...nodes];
    try {
      // Together: a node is ready only when the controller quorum and the internal topics' replicas are.
      await Promise.all(all.map((n) => n.start(240_000)));
    } catch (error) {
      await Promise.all(all.map((n) => n.destroy().catch(() => undefined)));
      throw error;
    }
    return new KafkaCluster(nodes, quorum);
  }

  get brokers(): string[] {
    return this.nodes.flatMap((n) => n.brokers);
  }

  /** A quiet client of the cluster. */
  kafka(clientId = 'kafka-cluster'): Kafka {
    return new Kafka({ clientId, brokers: this.brokers, logLevel: logLevel.NOTHING });
  }

  /** The `node.id` of `node`. */
  nodeIdOf(node: KafkaBroker): number {
    return this.nodes.indexOf(node) + 1;
  }

  /** The node leading partition `partition` of `topic`. */
  async leaderOf(topic: string, partition = 0): Promise<KafkaBroker> {
    const admin = this.kafka().admin();
    await admin.connect();
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      const leader = topics[0].partitions.find((p) => p.partitionId === partition)?.leader;
      const node = this.nodes[(leader ?? 0) - 1];
      if (!node) throw new Error(`No leader for ${topic}[${partition}] (metadata says ${leader}).`);
      return node;
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * The `node.id` leading the controller quorum, from the controllers' logs (the last transition to leader, by
   * epoch), or undefined when no log says.
   */
  async activeController(): Promise<number | undefined> {
    let latest: { node: number; epoch: number } | undefined;
    for (const node of this.controllers.length > 0 ? this.controllers : this.nodes) {
      const log = await fs.readFile(node.logFile, 'utf8').catch(() => '');
      for (const match of log.matchAll(/Completed transition to Leader\(.*?\bid=(\d+).*?\bepoch=(\d+)/g)) {
        const epoch = Number(match[2]);
        if (!latest || epoch > latest.epoch) latest = { node: Number(match[1]), epoch };
      }
    }
    return latest?.node;
  }

  /**
   * The node coordinating consumer group `groupId`, as the brokers answer a client's FindCoordinator (through
   * kafkajs's cluster, which a partition assigner is handed: kafkajs has no public call for it).
   */
  async coordinatorOf(groupId: string): Promise<KafkaBroker> {
    type Lookup = {
      refreshMetadata(): Promise<void>;
      findGroupCoordinatorMetadata(g: { groupId: string }): Promise<{ coordinator: { nodeId: number } }>;
    };
    let cluster: Lookup | undefined;
    const consumer = this.kafka().consumer({
      groupId,
      partitionAssigners: [
        (config) => {
          cluster = config.cluster;
          return PartitionAssigners.roundRobin(config);
        },
      ],
    });
    await consumer.connect();
    try {
      await (cluster as Lookup).refreshMetadata();
      const { coordinator } = await (cluster as Lookup).findGroupCoordinatorMetadata({ groupId });
      const node = this.nodes[coordinator.nodeId - 1];
      if (!node) throw new Error(`No node ${coordinator.nodeId} coordinates group ${groupId}.`);
      return node;
    } finally {
      await consumer.disconnect();
    }
  }

  /** The partitions of `topic` that node `nodeId` leads. */
  async partitionsLedBy(topic: string, nodeId: number): Promise<number[]> {
    const admin = this.kafka().admin();
    await admin.connect();
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      return topics[0].partitions.filter((p) => p.leader === nodeId).map((p) => p.partitionId);
    } finally {
      await admin.disconnect();
    }
  }

  /** Replicas and in-sync replicas of every partition of `topic`, and its `min.insync.replicas`. */
  async replication(topic: string): Promise<{ replicas: number[]; isr: number[]; minInsync: string }> {
    const admin = this.kafka().admin();
    await admin.connect();
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      const configs = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: 2, name: topic, configNames: ['min.insync.replicas'] }],
      });
      return {
        replicas: topics[0].partitions.map((p) => p.replicas.length),
        isr: topics[0].partitions.map((p) => p.isr.length),
        minInsync: configs.resources[0]?.configEntries[0]?.configValue ?? '?',
      };
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * Kills every node and removes its data: nothing is kept, so no controlled shutdown is waited for (a broker's
   * waits for a controller, which may be stopping beside it: 30 s, then SIGKILL anyway).
   */
  async destroy(): Promise<void> {
    const all = [...this.nodes, ...this.controllers];
    await Promise.all(all.map((n) => n.crash().catch(() => undefined)));
    await Promise.all(all.map((n) => n.destroy().catch(() => undefined)));
  }
}
