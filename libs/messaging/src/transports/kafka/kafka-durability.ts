/** What a topic looks like on the cluster, as far as losing acknowledged writes goes. */
export interface ObservedTopic {
  readonly topic: string;
  /** Replicas of its partitions (the fewest, if they differ). */
  readonly replicas: number;
  /** Its `min.insync.replicas` (undefined when the broker did not say). */
  readonly minInsyncReplicas?: number;
}

/**
 * Warnings about topics that could lose a write the producer saw acknowledged (acks=all): fewer replicas
 * than `transport.topics.replicationFactor` asks for, one replica on a cluster of three or more brokers,
 * or replicas with `min.insync.replicas` 1 (acks=all then waits for the leader alone).
 */
export function durabilityWarnings(
  expectedReplicas: number,
  brokers: number,
  topics: readonly ObservedTopic[],
): string[] {
  const warnings: string[] = [];
  for (const { topic, replicas, minInsyncReplicas } of topics) {
    if (replicas < expectedReplicas) {
      warnings.push(
        `topic '${topic}' has ${replicas} replica(s), transport.topics.replicationFactor asks for ${expectedReplicas}`,
      );
    } else if (replicas === 1 && brokers >= 3) {
      warnings.push(`topic '${topic}' has 1 replica on a cluster of ${brokers} brokers`);
    }
    if (replicas > 1 && minInsyncReplicas !== undefined && minInsyncReplicas < 2) {
      warnings.push(
        `topic '${topic}' has ${replicas} replicas but min.insync.replicas ${minInsyncReplicas}: ` +
          'a write acknowledged by the leader alone is lost if it dies',
      );
    }
  }
  return warnings;
}
