import { canonicalJson } from './canonical-json';
import { DeadLetterRecord, describeRecord } from './dead-letter-record';
import { RedrivePlanAlteredError } from './errors/redrive-plan-altered.error';
import { MessagePosition, PlannedMessage, RedrivePlan } from './redrive-plan';

/** A position as one string: `q3` (RabbitMQ), `p2@17` (Kafka partition 2, offset 17). */
function positionKey(position: MessagePosition): string {
  return position.kind === 'queue' ? `q${position.index}` : `p${position.partition}@${position.offset}`;
}

/**
 * Refuses a plan that names a position twice (a forged plan: the message would be published twice and its
 * second settle would fail), before anything is claimed or moved.
 */
export function checkUniquePositions(plan: RedrivePlan): void {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const { position } of plan.messages) {
    const key = positionKey(position);
    if (seen.has(key)) twice.add(key);
    seen.add(key);
  }
  if (twice.size > 0) {
    throw new RedrivePlanAlteredError(plan.source, [
      `positions named more than once: ${[...twice].join(', ')}`,
    ]);
  }
}

/**
 * Refuses when what the plan says of a message (type, failure, id, attempts, origin, redrives) is not what
 * the message read again says: an approver approved the description, and execution compared fingerprints
 * only, so a forged plan could show benign text over other messages (issue 45, finding 11). Called on the
 * records read before anything moves; names the positions and the fields that differ, never their values.
 */
export function checkDescriptions(plan: RedrivePlan, records: readonly DeadLetterRecord[]): void {
  const planned = new Map<string, PlannedMessage>(plan.messages.map((m) => [positionKey(m.position), m]));
  const differences: string[] = [];
  for (const record of records) {
    const key = positionKey(record.position);
    const described = describeRecord(record);
    const said = planned.get(key);
    if (!said) {
      differences.push(`the message at ${key} is not in the plan`);
      continue;
    }
    const fields = (Object.keys(described) as (keyof PlannedMessage)[]).filter(
      (field) => canonicalJson(described[field]) !== canonicalJson(said[field] ?? null),
    );
    if (fields.length > 0) {
      differences.push(`the plan's description of the message at ${key} differs in ${fields.join(', ')}`);
    }
  }
  if (differences.length > 0) throw new RedrivePlanAlteredError(plan.source, differences);
}
