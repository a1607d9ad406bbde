import { Admin, Kafka, logLevel } from 'kafkajs';
import { sleep } from '../../../tools/demo/blog-scenario';
import { ElectionTimes, RecoveryWatch } from './failover-run';

const POLL_MS = 100;
/** `offsets.topic.num.partitions` of the test cluster (tools/infra/kafka-broker.ts). */
const OFFSETS_PARTITIONS = 10;

/**
 * Watches, through the surviving brokers only, how long the cluster takes to work without node `deadNode`:
 * a new leader for `topic[partition]` (the controller fences the node once its broker session expires,
 * then elects), and the dead node gone from the ISR of every partition the services write to. Polls the
 * metadata every 100 ms from the fault on; `stop()` ends the watch and returns the times.
 */
export class KafkaElectionWatch implements RecoveryWatch {
  private stopped = false;
  private watching?: Promise<ElectionTimes>;

  private constructor(
    private readonly admin: Admin,
    private readonly target: { deadNode: number; topic: string; partition: number; group: string },
  ) {}

  /** Connects to `survivors` (the bootstrap addresses of the nodes that stay up); `begin()` starts watching. */
  static async connect(options: {
    survivors: readonly string[];
    deadNode: number;
    topic: string;
    partition: number;
    group: string;
  }): Promise<KafkaElectionWatch> {
    const kafka = new Kafka({
      clientId: 'election-watch',
      brokers: [...options.survivors],
      connectionTimeout: 1_000,
      requestTimeout: 2_000,
      retry: { retries: 0 },
      logLevel: logLevel.NOTHING,
    });
    const admin = kafka.admin();
    await admin.connect();
    return new KafkaElectionWatch(admin, options);
  }

  /** Polls from now on; `faultAt` is when the node was killed (Date.now()). */
  begin(faultAt: number): void {
    this.watching ??= this.watch(faultAt);
  }

  async stop(): Promise<ElectionTimes> {
    this.stopped = true;
    try {
      return (await this.watching) ?? { coordinatorWasDead: false };
    } finally {
      await this.admin.disconnect().catch(() => undefined);
    }
  }

  private async watch(faultAt: number): Promise<ElectionTimes> {
    const { deadNode, topic, partition, group } = this.target;
    const offsetsPartition = groupOffsetsPartition(group);
    let coordinator: number | undefined;
    let leaderElectedMs: number | undefined;
    let isrShrunkMs: number | undefined;
    let firstWriteMs: number | undefined;
    let writtenAtElection: number | undefined;
    while (!this.stopped && firstWriteMs === undefined) {
      try {
        const at = Date.now() - faultAt;
        // A fresh request each time: the admin client's own metadata cache would hide the change.
        const { topics } = await this.admin.fetchTopicMetadata({ topics: [topic, '__consumer_offsets'] });
        const ours = topics.find((t) => t.name === topic)?.partitions ?? [];
        const offsets = topics.find((t) => t.name === '__consumer_offsets')?.partitions ?? [];
        const groupPartition = offsets.find((p) => p.partitionId === offsetsPartition);
        coordinator ??= groupPartition?.leader;
        const watched = ours.find((p) => p.partitionId === partition);
        if (leaderElectedMs === undefined && watched && watched.leader >= 0 && watched.leader !== deadNode)
          leaderElectedMs = at;
        const written = [...ours, ...(groupPartition ? [groupPartition] : [])];
        if (
          isrShrunkMs === undefined &&
          written.length > 0 &&
          written.every((p) => !p.isr.includes(deadNode))
        )
          isrShrunkMs = at;
        if (leaderElectedMs !== undefined && isrShrunkMs !== undefined) {
          // The relay's side: the topic's end offsets move (an acks=all write confirmed) after the election.
          const ends = await this.admin.fetchTopicOffsets(topic);
          const total = ends.reduce((sum, p) => sum + Number(p.high), 0);
          writtenAtElection ??= total;
          if (total > writtenAtElection) firstWriteMs = Date.now() - faultAt;
        }
      } catch {
        // a survivor busy, or a leader not elected yet: ask again
      }
      await sleep(POLL_MS);
    }
    return {
      leaderElectedMs,
      isrShrunkMs,
      firstWriteMs,
      coordinatorWasDead: coordinator === deadNode,
    };
  }
}

/** The `__consumer_offsets` partition of `group`, as Kafka picks it: `Utils.abs(groupId.hashCode()) % n`. */
export function groupOffsetsPartition(group: string, partitions = OFFSETS_PARTITIONS): number {
  let hash = 0;
  for (let i = 0; i < group.length; i++) hash = (Math.imul(31, hash) + group.charCodeAt(i)) | 0;
  return (hash === -2147483648 ? 0 : Math.abs(hash)) % partitions;
}
