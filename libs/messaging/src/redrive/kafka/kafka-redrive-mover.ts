import { Admin, Kafka, SeekEntry } from 'kafkajs';
import { WireMessage } from '../../envelope/wire-message';
import { LazyKafkaClient } from '../../transports/kafka/kafka-clients';
import { ReliableProducer } from '../../transports/kafka/reliable-producer';
import { outcomesWithin, PublishOutcome } from '../../transports/publish-outcome';
import { RedriveLimits } from '../redrive-limits';
import { copiesOf, CopiesOf } from '../dead-letter-backend.interface';
import { DeadLetterRecord } from '../dead-letter-record';
import { PlannedMessage, RedrivePlan } from '../redrive-plan';
import { MessageRedriveOutcome } from '../redrive-result';
import { offsetOf, partitionRuns, readPlanned } from './kafka-planned-records';
import { forwardOnly } from './forward-only';
import { RedriveCluster } from './kafkajs-cluster.patch';
import { commitRedriveOffsets } from './redrive-group-commit';

/**
 * Moves a plan's records: checks the partitions still start where the plan does and hold the planned records,
 * publishes each copy and waits for acks=all, partition by partition in offset order, stopping a partition at
 * its first unconfirmed copy (its offset, and all after it, stay in the DLQ), then commits the redrive group's
 * offset past the last confirmed record of each partition, never behind what the group had committed. The
 * caller holds the DLQ exclusively (the ledger) from before the re-read to the commit.
 */
export class KafkaRedriveMover {
  private readonly producer: LazyKafkaClient<ReliableProducer>;

  constructor(
    kafka: Kafka,
    private readonly getAdmin: () => Promise<Admin>,
    private readonly getCluster: () => Promise<RedriveCluster>,
    private readonly publishTimeoutMs: number = RedriveLimits.KAFKA_PUBLISH_TIMEOUT_MS,
  ) {
    this.producer = new LazyKafkaClient(() => new ReliableProducer(kafka));
  }

  async move(
    plan: RedrivePlan,
    copyOf: CopiesOf,
    checkRead: (records: readonly DeadLetterRecord[]) => void,
  ): Promise<MessageRedriveOutcome[]> {
    const [admin, cluster] = await Promise.all([this.getAdmin(), this.getCluster()]);
    const runs = partitionRuns(plan);
    const records = await readPlanned(cluster, admin, plan, runs);
    const kept = new Set(plan.kept ?? []);
    // Only what moves is checked: a kept record (e.g. one skipped as unredrivable) stays a dead letter.
    checkRead(
      [...runs].flatMap(([partition, planned]) => records[partition].filter((_, i) => !kept.has(planned[i]))),
    );
    const outcomes = new Map<PlannedMessage, MessageRedriveOutcome>();
    const settle: SeekEntry[] = [];
    for (const [partition, planned] of runs) {
      let blockedBy: string | undefined;
      for (const [i, message] of planned.entries()) {
        const base = { position: message.position, messageId: message.messageId };
        if (blockedBy) {
          if (!kept.has(message))
            outcomes.set(message, { ...base, status: 'NOT_ATTEMPTED', error: blockedBy });
          continue;
        }
        const record = records[partition][i];
        // A record the plan keeps goes to the end of the DLQ as it is, before the offset passes it.
        const outcome = kept.has(message)
          ? await this.publish(record.wire)
          : await this.publishAll(copiesOf(copyOf, record));
        if (outcome.status === 'CONFIRMED') {
          if (!kept.has(message)) outcomes.set(message, { ...base, status: 'REDRIVEN' });
          settle.push({ partition, offset: (BigInt(offsetOf(message)) + 1n).toString() });
        } else {
          blockedBy = `message at offset ${offsetOf(message)} of partition ${partition} was not confirmed`;
          if (!kept.has(message))
            outcomes.set(message, {
              ...base,
              status: 'NOT_CONFIRMED',
              error: `${outcome.status}: ${outcome.error.message}`,
            });
        }
      }
    }
    const last = [...new Map(settle.map((s) => [s.partition, s])).values()]; // the last per partition
    if (last.length > 0) {
      try {
        const partitions = await forwardOnly(admin, plan.source, last);
        if (partitions.length > 0) {
          await commitRedriveOffsets(cluster, plan.source, partitions);
        }
      } catch (error) {
        for (const [message, outcome] of outcomes) {
          if (outcome.status === 'REDRIVEN') {
            outcomes.set(message, { ...outcome, status: 'NOT_SETTLED', error: (error as Error).message });
          }
        }
      }
    }
    return plan.messages.map((m) => outcomes.get(m) as MessageRedriveOutcome);
  }

  async close(): Promise<void> {
    await this.producer.reset();
  }

  /** The copies of one record in order, stopping at the first not confirmed (its outcome is the record's). */
  private async publishAll(copies: readonly WireMessage[]): Promise<PublishOutcome> {
    let outcome: PublishOutcome | undefined;
    for (const copy of copies) {
      outcome = await this.publish(copy);
      if (outcome.status !== 'CONFIRMED') break;
    }
    return outcome as PublishOutcome;
  }

  /** One copy, connecting first if need be, within `publishTimeoutMs` (past it: AMBIGUOUS, client reset). */
  private async publish(message: WireMessage): Promise<PublishOutcome> {
    const [outcome] = await outcomesWithin(
      async () => [await (await this.producer.get()).send(message.destination, [message])],
      1,
      this.publishTimeoutMs,
      'confirmation of the redriven copy',
    );
    // The next publish connects afresh (a send still running on the old client is abandoned with it).
    if (outcome.status !== 'CONFIRMED') await this.producer.reset().catch(() => undefined);
    return outcome;
  }
}
