import { Kafka, KafkaMessage } from 'kafkajs';

/** A record as kafkajs's Fetch decodes it (control records included, flagged). */
export interface FetchedRecord {
  readonly offset: string;
  readonly timestamp: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers?: Record<string, Buffer | Buffer[] | undefined>;
  readonly isControlRecord?: boolean;
}

/** One partition of a Fetch response. */
export interface FetchedPartition {
  readonly partition: number;
  readonly highWatermark: string;
  readonly messages: readonly FetchedRecord[];
}

/** The part of kafkajs's internal `Broker` (one broker connection) the redrive uses. */
export interface ClusterBroker {
  fetch(request: {
    maxWaitTime: number;
    minBytes: number;
    maxBytes: number;
    topics: { topic: string; partitions: { partition: number; fetchOffset: string; maxBytes: number }[] }[];
  }): Promise<{ responses: { topicName: string; partitions: FetchedPartition[] }[] }>;
  offsetCommit(request: {
    groupId: string;
    groupGenerationId: number;
    memberId: string;
    topics: { topic: string; partitions: { partition: number; offset: string }[] }[];
  }): Promise<unknown>;
}

/** The part of kafkajs's internal `Cluster` (metadata, brokers, coordinators) the redrive uses. */
export interface RedriveCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  refreshMetadata(): Promise<void>;
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
  findBroker(broker: { nodeId: string }): Promise<ClusterBroker>;
  findGroupCoordinator(group: { groupId: string }): Promise<ClusterBroker>;
}

/** The name of the kafkajs `Kafka` instance's own property that makes a `Cluster` (as its admin does). */
export const CREATE_CLUSTER = 'private:Kafka:createCluster';

/**
 * A kafkajs cluster of `kafka`'s brokers, credentials and retries, not yet connected. kafkajs reads only
 * through a consumer group (join, sync, a rebalance delay, leave: seconds, and a group the principal must be
 * allowed) and commits a group's offsets only as a member (`admin.setOffsets` runs a whole consumer and waits
 * out its fetch wait); the redrive needs neither, so it fetches from partition leaders and commits as the
 * Java admin's `alterConsumerGroupOffsets` does, through the cluster kafkajs builds for its own clients.
 */
export function redriveCluster(kafka: Kafka): RedriveCluster {
  const key = Object.getOwnPropertySymbols(kafka).find((s) => s.description === CREATE_CLUSTER);
  const create = key && (kafka as unknown as Record<symbol, unknown>)[key];
  if (typeof create !== 'function') {
    throw new Error(
      `kafkajs no longer has '${CREATE_CLUSTER}': revisit redrive/kafka/kafkajs-cluster.patch.ts ` +
        '(see its contract spec) before upgrading kafkajs.',
    );
  }
  return (create as (options: object) => RedriveCluster)({ allowAutoTopicCreation: false });
}

/** What a fetch of one partition from `fetchedOffset` holds, as kafkajs's consumer would see it. */
export interface FetchedBatch {
  /** The records at or after the fetched offset, without control records and aborted transactions. */
  readonly messages: readonly KafkaMessage[];
  /** The offset of the last record at or after the fetched offset, control records included. */
  readonly lastOffset?: string;
}

type KafkajsBatch = { messages: KafkaMessage[]; messagesWithinOffset: { offset: string }[] };
/* eslint-disable-next-line @typescript-eslint/no-require-imports -- kafkajs's Batch has no typed entry point */
const Batch = require('kafkajs/src/consumer/batch.js') as new (
  topic: string,
  fetchedOffset: string,
  partition: FetchedPartition,
) => KafkajsBatch;

/**
 * A fetched partition through kafkajs's own `Batch`: the records a consumer would be given (the ones before
 * the fetched offset of a compressed batch, control records and aborted transactions left out), and how far
 * the fetch got including what was left out, so that a reader never waits for an offset it will not be given.
 */
export function fetchedBatch(
  topic: string,
  fetchedOffset: bigint,
  partition: FetchedPartition,
): FetchedBatch {
  const batch = new Batch(topic, fetchedOffset.toString(), partition);
  return { messages: batch.messages, lastOffset: batch.messagesWithinOffset.at(-1)?.offset };
}
