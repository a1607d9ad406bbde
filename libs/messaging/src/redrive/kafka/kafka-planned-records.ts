import { Admin } from 'kafkajs';
import { DeadLetterRecord, fingerprintOf } from '../dead-letter-record';
import { RedrivePlanStaleError } from '../errors/redrive-plan-stale.error';
import { RedriveLimits } from '../redrive-limits';
import { PlannedMessage, RedrivePlan } from '../redrive-plan';
import { RedriveCluster } from './kafkajs-cluster.patch';
import { readRanges } from './kafka-range-reader';
import { kafkaRecord } from './kafka-records';
import { PartitionRange, pendingRanges } from './partition-ranges';

/** The planned records, read again and checked against the plan; refuses if anything moved or changed. */
export async function readPlanned(
  cluster: RedriveCluster,
  admin: Admin,
  plan: RedrivePlan,
  runs: Map<number, PlannedMessage[]>,
): Promise<Record<number, DeadLetterRecord[]>> {
  const stale = (detail: string) => new RedrivePlanStaleError(plan.source, detail);
  const current = new Map((await pendingRanges(admin, plan.source)).map((r) => [r.partition, r]));
  const ranges: PartitionRange[] = [];
  for (const [partition, planned] of runs) {
    const from = BigInt(offsetOf(planned[0]));
    const now = current.get(partition);
    if (now?.from !== from) {
      throw stale(`partition ${partition} now starts at offset ${now?.from ?? 'none'}, the plan at ${from}`);
    }
    ranges.push({ partition, from, to: BigInt(offsetOf(planned[planned.length - 1])) + 1n });
  }
  const read = await readRanges(cluster, plan.source, ranges, RedriveLimits.KAFKA_READ_TIMEOUT_MS);
  const records: Record<number, DeadLetterRecord[]> = {};
  for (const [partition, planned] of runs) {
    const messages = read.get(partition) ?? [];
    // Every record of the range must be planned: committing past an unplanned one would drop it.
    if (messages.length !== planned.length) {
      throw stale(
        `partition ${partition} holds ${messages.length} records where the plan has ${planned.length}`,
      );
    }
    records[partition] = planned.map((message, i) => {
      const record = kafkaRecord(plan.source, partition, messages[i]);
      if (messages[i].offset !== offsetOf(message) || fingerprintOf(record.wire) !== message.fingerprint) {
        throw stale(
          `the record at offset ${offsetOf(message)} of partition ${partition} is not the planned one`,
        );
      }
      return record;
    });
  }
  return records;
}

/**
 * The plan's messages and the records it keeps (re-parks), by partition, each run in offset order: from
 * where the partition's pending records start to its last planned message, with nothing left out.
 */
export function partitionRuns(plan: RedrivePlan): Map<number, PlannedMessage[]> {
  const runs = new Map<number, PlannedMessage[]>();
  for (const message of [...plan.messages, ...(plan.kept ?? [])]) {
    if (message.position.kind !== 'partition') {
      throw new RedrivePlanStaleError(plan.source, 'the plan was not made on Kafka');
    }
    runs.set(message.position.partition, [...(runs.get(message.position.partition) ?? []), message]);
  }
  for (const run of runs.values()) run.sort((a, b) => (BigInt(offsetOf(a)) < BigInt(offsetOf(b)) ? -1 : 1));
  return new Map([...runs].sort(([a], [b]) => a - b));
}

export function offsetOf(message: PlannedMessage): string {
  return message.position.kind === 'partition' ? message.position.offset : '-1';
}
