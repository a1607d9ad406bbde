import { Admin, Kafka } from 'kafkajs';
import { AdminCredential, KafkaRedriveBroker } from '../admin-connection';
import { CopiesOf, DeadLetterBackend, DeadLetterPeek } from '../dead-letter-backend.interface';
import { DeadLetterRecord } from '../dead-letter-record';
import { DeadLetterQueueNotFoundError } from '../errors/dead-letter-queue-not-found.error';
import { RedriveTargetNotFoundError } from '../errors/redrive-target-not-found.error';
import { cutOffOf, ReadBudget } from '../read-budget';
import { RedriveLimits } from '../redrive-limits';
import { MessagePosition, RedrivePlan } from '../redrive-plan';
import { DeadLetterQueueInfo, MessageRedriveOutcome } from '../redrive-result';
import { asKafkaAdmin } from './kafka-access';
import { LazyKafkaClient } from '../../transports/kafka/kafka-clients';
import { kafkaAdminClient } from './kafka-admin-client';
import { KafkaRedriveMover } from './kafka-redrive-mover';
import { readHead } from './kafka-head-reader';
import { readRanges, readRangesWithin } from './kafka-range-reader';
import { kafkaRecord } from './kafka-records';
import { redriveCluster, RedriveCluster } from './kafkajs-cluster.patch';
import { pendingRanges, pendingWhileListing, recordsIn } from './partition-ranges';
import { systemClock } from '../../common/clock';

/** Offsets a scan reads at a time, per partition. */
const SCAN_PAGE = 500n;

/**
 * Redrive on Kafka, as the admin principal. A dead-letter topic is a log: what was redriven is marked by the
 * offsets the group `<dlq>.redrive` committed, and a plan reads from there without committing anything.
 * The target is the destination topic the messages failed in; a redriven copy names its group
 * (`msg.redrive-group`), and the other groups of the topic skip it.
 */
export class KafkaDeadLetters implements DeadLetterBackend {
  readonly kind = 'kafka' as const;
  private readonly kafka: Kafka;
  private readonly admin: LazyKafkaClient<Admin>;
  /** Reads and commits without consumer groups (`kafkajs-cluster.patch.ts`). */
  private readonly cluster: LazyKafkaClient<RedriveCluster>;
  private readonly mover: KafkaRedriveMover;

  constructor(
    broker: KafkaRedriveBroker,
    private readonly credential: AdminCredential,
  ) {
    this.kafka = kafkaAdminClient(broker, credential);
    this.admin = new LazyKafkaClient(() => this.kafka.admin());
    this.cluster = new LazyKafkaClient(() => redriveCluster(this.kafka));
    this.mover = new KafkaRedriveMover(
      this.kafka,
      () => this.admin.get(),
      () => this.cluster.get(),
    );
  }

  async list(names: readonly string[]): Promise<DeadLetterQueueInfo[]> {
    return this.asAdmin('list dead-letter topics', async (admin) => {
      const topics = new Set(await admin.listTopics());
      const wanted = names.length > 0 ? names : [...topics].filter((t) => t.endsWith('.dlq')).sort();
      const found: DeadLetterQueueInfo[] = [];
      for (const name of wanted) {
        // A topic deleted while the listing runs is not there (listing all: left out).
        const depth = topics.has(name)
          ? await pendingWhileListing(admin, name, (ms) => systemClock.sleep(ms))
          : undefined;
        if (depth === undefined && names.length === 0) continue;
        found.push({ name, exists: depth !== undefined, depth: depth ?? 0 });
      }
      return found;
    });
  }

  async peek(
    source: string,
    limit: number,
    maxBytes: number = RedriveLimits.READ_BUDGET_BYTES,
  ): Promise<DeadLetterPeek> {
    return this.asAdmin(`read ${source}`, async (admin) => {
      await this.requireTopic(admin, source, () => new DeadLetterQueueNotFoundError(source));
      const ranges = await pendingRanges(admin, source);
      const cluster = await this.cluster.get();
      const budget = new ReadBudget(maxBytes);
      const records = await readHead(source, ranges, limit, budget, (wanted, within) =>
        readRangesWithin(cluster, source, wanted, RedriveLimits.KAFKA_READ_TIMEOUT_MS, within),
      );
      const depth = recordsIn(ranges);
      const cutOff = cutOffOf(budget, limit, depth, records.length);
      return { depth, records, ...(cutOff ? { cutOff } : {}) };
    });
  }

  async peekAt(source: string, position: MessagePosition): Promise<DeadLetterRecord | undefined> {
    if (position.kind !== 'partition') return undefined;
    return this.asAdmin(`read ${source}`, async (admin) => {
      await this.requireTopic(admin, source, () => new DeadLetterQueueNotFoundError(source));
      const offset = BigInt(position.offset);
      const pending = (await pendingRanges(admin, source)).find((r) => r.partition === position.partition);
      if (!pending || offset < pending.from || offset >= pending.to) return undefined;
      const range = { partition: position.partition, from: offset, to: offset + 1n };
      const read = await readRanges(
        await this.cluster.get(),
        source,
        [range],
        RedriveLimits.KAFKA_READ_TIMEOUT_MS,
      );
      const [message] = read.get(position.partition) ?? [];
      return message ? kafkaRecord(source, position.partition, message) : undefined;
    });
  }

  async scan(
    source: string,
    visit: (record: DeadLetterRecord) => Promise<boolean> | boolean,
  ): Promise<{ readonly depth: number }> {
    return this.asAdmin(`read ${source}`, async (admin) => {
      await this.requireTopic(admin, source, () => new DeadLetterQueueNotFoundError(source));
      const ranges = await pendingRanges(admin, source);
      const cluster = await this.cluster.get();
      for (const range of ranges) {
        // A page of offsets at a time: what is held is one page, whatever the partition's length.
        for (let from = range.from; from < range.to; from += SCAN_PAGE) {
          const to = from + SCAN_PAGE < range.to ? from + SCAN_PAGE : range.to;
          const page = { partition: range.partition, from, to };
          const read = await readRanges(cluster, source, [page], RedriveLimits.KAFKA_READ_TIMEOUT_MS);
          for (const message of read.get(range.partition) ?? []) {
            if (!(await visit(kafkaRecord(source, range.partition, message))))
              return { depth: recordsIn(ranges) };
          }
        }
      }
      return { depth: recordsIn(ranges) };
    });
  }

  async checkTarget(source: string, target: string): Promise<void> {
    await this.asAdmin(`inspect ${target}`, (admin) =>
      this.requireTopic(admin, target, () => new RedriveTargetNotFoundError(source, target)),
    );
  }

  /** A topic with the source's partition count (and the broker's default replication), never consumed. */
  async ensureArchive(source: string, archive: string): Promise<void> {
    await this.asAdmin(`create ${archive}`, async (admin) => {
      if ((await admin.listTopics()).includes(archive)) return;
      const partitions = (await admin.fetchTopicOffsets(source)).length;
      await admin.createTopics({
        topics: [{ topic: archive, numPartitions: partitions }],
        waitForLeaders: true,
      });
    });
  }

  async move(
    plan: RedrivePlan,
    copyOf: CopiesOf,
    checkRead: (records: readonly DeadLetterRecord[]) => void,
  ): Promise<MessageRedriveOutcome[]> {
    return this.asAdmin(`redrive ${plan.source}`, () => this.mover.move(plan, copyOf, checkRead));
  }

  async close(): Promise<void> {
    await this.mover.close();
    await this.cluster.reset();
    await this.admin.reset();
  }

  private async requireTopic(admin: Admin, topic: string, missing: () => Error): Promise<void> {
    if (!(await admin.listTopics()).includes(topic)) throw missing();
  }

  private asAdmin<T>(operation: string, work: (admin: Admin) => Promise<T>): Promise<T> {
    return asKafkaAdmin(this.credential.principal, operation, async () => work(await this.admin.get()));
  }
}
