import * as path from 'node:path';
import { Kafka, KafkaJSConnectionError, Partitioners, Producer, ProducerConfig } from 'kafkajs';

const kafkajsDir = path.dirname(require.resolve('kafkajs/package.json'));
/* eslint-disable @typescript-eslint/no-require-imports -- kafkajs's internals have no typed entry point */
const createProducer = require(path.join(kafkajsDir, 'src/producer/index.js')) as (
  options: Record<string, unknown>,
) => Producer;
/* eslint-enable @typescript-eslint/no-require-imports */

/** One Produce request a scripted broker got: the partitions in it, and whether it was answered. */
export interface ProduceCall {
  readonly nodeId: number;
  readonly partitions: number[];
  readonly answered: boolean;
}

interface TopicData {
  topic: string;
  partitions: { partition: number | string; messages: unknown[] }[];
}

/** A kafkajs logger that says nothing, for kafkajs internals built by hand in specs. */
export const quietLogger = () => {
  const logger = {
    info: () => undefined,
    debug: () => undefined,
    warn: () => undefined,
    error: () => undefined,
  };
  return { ...logger, namespace: () => logger };
};

/**
 * A Kafka cluster of scripted brokers (node ids 1, 2, …) with one topic, under a real kafkajs producer (its
 * own `sendMessages`, retrier, sequence numbers and partitioner): a unit-speed stand-in for the failovers the
 * cluster suite runs. `failThenMove` makes a leader's next Produce fail as a reset connection does, and moves
 * the partition's leadership as an election would, before kafkajs refreshes its metadata and retries.
 */
export class KafkajsScriptedCluster {
  readonly produced: ProduceCall[] = [];
  /** How often a producer of this cluster disconnected. */
  disconnects = 0;
  private readonly failures = new Map<number, { partition: number; to: number }>();
  private silent = false;

  /** `leaders[p]`: the node leading partition p of `topic`. */
  constructor(
    readonly topic: string,
    private readonly leaders: number[],
  ) {}

  /** The next Produce to the leader of `partition` fails (ECONNRESET), and `to` leads the partition after. */
  failThenMove(partition: number, to: number): void {
    this.failures.set(this.leaders[partition], { partition, to });
  }

  /** Every Produce from now on is taken and never answered (a broker that stopped replying). */
  stopAnswering(): void {
    this.silent = true;
  }

  /** A key the default partitioner puts in `partition`. */
  keyFor(partition: number): string {
    const choose = Partitioners.DefaultPartitioner();
    const partitionMetadata = this.metadata();
    for (let i = 0; ; i++) {
      const key = `key-${i}`;
      if (choose({ topic: this.topic, partitionMetadata, message: { key, value: '' } }) === partition)
        return key;
    }
  }

  /** A `Kafka` whose producers are kafkajs's own, on this cluster. */
  kafka(): Kafka {
    const producer = (config?: ProducerConfig) =>
      createProducer({ ...config, cluster: this.cluster(), logger: quietLogger() });
    return { producer } as unknown as Kafka;
  }

  private metadata() {
    return this.leaders.map((leader, partitionId) => ({
      partitionId,
      leader,
      partitionErrorCode: 0,
      replicas: [1, 2, 3],
      isr: [1, 2, 3],
    }));
  }

  private cluster(): Record<string, unknown> {
    const brokers = new Map([1, 2, 3].map((nodeId) => [nodeId, this.broker(nodeId)]));
    return {
      connect: async () => undefined,
      disconnect: async () => void this.disconnects++,
      isConnected: () => true,
      refreshMetadata: async () => undefined,
      refreshMetadataIfNecessary: async () => undefined,
      addMultipleTargetTopics: async () => undefined,
      removeBroker: () => undefined,
      findTopicPartitionMetadata: () => this.metadata(),
      findLeaderForPartitions: (_topic: string, partitions: string[]) => {
        const byLeader: Record<number, number[]> = {};
        for (const p of partitions.map(Number)) (byLeader[this.leaders[p]] ??= []).push(p);
        return byLeader;
      },
      findBroker: async ({ nodeId }: { nodeId: number | string }) => brokers.get(Number(nodeId)),
      findControllerBroker: async () => brokers.get(1),
    };
  }

  private broker(nodeId: number) {
    return {
      nodeId,
      initProducerId: async () => ({ producerId: 1000, producerEpoch: 0 }),
      produce: async ({ topicData }: { topicData: TopicData[] }) => {
        const partitions = topicData.flatMap((t) => t.partitions.map((p) => Number(p.partition)));
        if (this.silent) return new Promise<never>(() => undefined);
        const failure = this.failures.get(nodeId);
        if (failure) {
          this.failures.delete(nodeId);
          this.leaders[failure.partition] = failure.to;
          this.produced.push({ nodeId, partitions, answered: false });
          throw new KafkaJSConnectionError('Connection error: read ECONNRESET', { code: 'ECONNRESET' });
        }
        this.produced.push({ nodeId, partitions, answered: true });
        return {
          throttleTime: 0,
          topics: topicData.map((t) => ({
            topicName: t.topic,
            partitions: t.partitions.map((p) => ({
              partition: Number(p.partition),
              errorCode: 0,
              baseOffset: '0',
              logAppendTime: '-1',
              logStartOffset: '0',
            })),
          })),
        };
      },
    };
  }
}
