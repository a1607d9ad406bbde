import { Admin, Kafka } from 'kafkajs';
import { WireMessage } from '../../envelope/wire-message';
import { LazyKafkaClient } from '../../transports/kafka/kafka-clients';
import { ReliableProducer } from '../../transports/kafka/reliable-producer';
import { outcomesWithin } from '../../transports/publish-outcome';
import { AdminCredential, KafkaRedriveBroker } from '../admin-connection';
import { RedriveTargetNotFoundError } from '../errors/redrive-target-not-found.error';
import { asKafkaAdmin } from '../kafka/kafka-access';
import { kafkaAdminClient } from '../kafka/kafka-admin-client';
import { readRanges } from '../kafka/kafka-range-reader';
import { kafkaRecord } from '../kafka/kafka-records';
import { redriveCluster, RedriveCluster } from '../kafka/kafkajs-cluster.patch';
import { RedriveLimits } from '../redrive-limits';
import { CopyOf, ReplayBackend, ReplayedPartition } from './replay-backend';
import { ReplayLimits } from './replay-limits';
import { ReplayPacer } from './replay-pacer';
import { ReplayPartitionWindow, ReplayPlan } from './replay-plan';
import { PartitionWatermarks, windowsBetween } from './replay-window';

/**
 * Replay on Kafka, as the admin principal: resolves a window (times through the broker's time index,
 * `fetchTopicOffsetsByTimestamp`; offsets checked against what the log keeps) and publishes the copies of
 * its records partition by partition, in offset order, `ReplayLimits.PAGE_RECORDS` read at a time, each
 * confirmed (acks=all) before the next goes and none faster than the pacer lets through. A partition stops at
 * its first unconfirmed copy. Reads without a consumer group and commits nothing.
 */
export class KafkaReplay implements ReplayBackend {
  private readonly kafka: Kafka;
  private readonly admin: LazyKafkaClient<Admin>;
  private readonly cluster: LazyKafkaClient<RedriveCluster>;
  private readonly producer: LazyKafkaClient<ReliableProducer>;

  constructor(
    broker: KafkaRedriveBroker,
    private readonly credential: AdminCredential,
    private readonly publishTimeoutMs: number = RedriveLimits.KAFKA_PUBLISH_TIMEOUT_MS,
  ) {
    this.kafka = kafkaAdminClient(broker, credential);
    this.admin = new LazyKafkaClient(() => this.kafka.admin());
    this.cluster = new LazyKafkaClient(() => redriveCluster(this.kafka));
    this.producer = new LazyKafkaClient(() => new ReliableProducer(this.kafka));
  }

  /** The topic's partitions with the offsets they keep; `RedriveTargetNotFoundError` when it does not exist. */
  watermarks(topic: string): Promise<PartitionWatermarks[]> {
    return this.asAdmin(`read ${topic}`, async (admin) => {
      if (!(await admin.listTopics()).includes(topic)) {
        throw new RedriveTargetNotFoundError(topic, topic);
      }
      return (await admin.fetchTopicOffsets(topic)).map((p) => ({
        partition: p.partition,
        low: p.low,
        high: p.high,
      }));
    });
  }

  /** The offsets between two times, per partition: from the first record at or after `from` to the first at or after `to`. */
  windowByTime(topic: string, from: Date, to: Date): Promise<ReplayPartitionWindow[]> {
    return this.asAdmin(`read ${topic}`, async (admin) =>
      windowsBetween(
        await admin.fetchTopicOffsetsByTimestamp(topic, from.getTime()),
        await admin.fetchTopicOffsetsByTimestamp(topic, to.getTime()),
      ),
    );
  }

  /** The copies go back into the topic (the other groups skip them by `msg.redrive-group`). */
  targetOf(topic: string): string {
    return topic;
  }

  /** A Kafka plan records nothing more than the topic. */
  planFields(): Record<string, never> {
    return {};
  }

  /** Publishes the copies of the plan's window (see the class). */
  replay(plan: ReplayPlan, copyOf: CopyOf, pacer: ReplayPacer): Promise<ReplayedPartition[]> {
    return this.asAdmin(`replay ${plan.source}`, async () => {
      const cluster = await this.cluster.get();
      const done: ReplayedPartition[] = [];
      for (const window of plan.partitions)
        done.push(await this.replayPartition(cluster, plan, window, copyOf, pacer));
      return done;
    });
  }

  async close(): Promise<void> {
    await this.producer.reset();
    await this.cluster.reset();
    await this.admin.reset();
  }

  private async replayPartition(
    cluster: RedriveCluster,
    plan: ReplayPlan,
    window: ReplayPartitionWindow,
    copyOf: CopyOf,
    pacer: ReplayPacer,
  ): Promise<ReplayedPartition> {
    const { partition } = window;
    const to = BigInt(window.to);
    let position = BigInt(window.from);
    let published = 0;
    let skipped = 0;
    while (position < to) {
      const pageEnd =
        position + BigInt(ReplayLimits.PAGE_RECORDS) < to ? position + BigInt(ReplayLimits.PAGE_RECORDS) : to;
      const read = await readRanges(
        cluster,
        plan.source,
        [{ partition, from: position, to: pageEnd }],
        RedriveLimits.KAFKA_READ_TIMEOUT_MS,
      );
      const messages = read.get(partition) ?? [];
      for (const message of messages) {
        const made = copyOf(kafkaRecord(plan.source, partition, message).wire);
        if ('skipped' in made) {
          skipped++;
        } else {
          await pacer.admit();
          const error = await this.publish(made.copy);
          if (error) return { partition, published, skipped, next: message.offset, error };
          published++;
        }
        position = BigInt(message.offset) + 1n;
      }
      // A compacted gap or control records at the end of the page: nothing more to read before its end.
      if (position < pageEnd) position = pageEnd;
    }
    return { partition, published, skipped, next: window.to };
  }

  /** One copy within `publishTimeoutMs`; resolves with why it was not confirmed, or undefined. */
  private async publish(message: WireMessage): Promise<string | undefined> {
    const [outcome] = await outcomesWithin(
      async () => [await (await this.producer.get()).send(message.destination, [message])],
      1,
      this.publishTimeoutMs,
      'confirmation of the replayed copy',
    );
    if (outcome.status === 'CONFIRMED') return undefined;
    await this.producer.reset().catch(() => undefined);
    return `${outcome.status}: ${outcome.error.message}`;
  }

  private asAdmin<T>(operation: string, work: (admin: Admin) => Promise<T>): Promise<T> {
    return asKafkaAdmin(this.credential.principal, operation, async () => work(await this.admin.get()));
  }
}
