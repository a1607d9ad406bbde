import { destinationNames } from '../../topology/destination-names';
import { MessagingTopology } from '../../topology/messaging-topology';
import { ApprovalMismatchError } from '../errors/approval-mismatch.error';
import { RedrivePlanAlteredError } from '../errors/redrive-plan-altered.error';
import { RedriveTargetRefusedError } from '../errors/redrive-target-refused.error';
import { RedriveLedger } from '../ledger/redrive-ledger.interface';
import { isPlanIntact } from '../redrive-plan';
import { checkTarget } from '../redrive-route';
import { ReplayPlan } from './replay-plan';

const GROUP = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * Where a replay may go: back into the topic it reads (never a dead-letter, retry or broker-internal topic),
 * for a group by a valid name; with a topology, one of the topology's groups of that topic. Throws
 * `RedriveTargetRefusedError`.
 */
export function checkReplayRoute(topic: string, group: string, topology?: MessagingTopology): void {
  checkTarget(topic, topic);
  if (!GROUP.test(group)) throw new RedriveTargetRefusedError(topic, group, 'not a consumer group name');
  if (topology && !topology.groups.some((g) => g.destination === topic && g.group === group)) {
    throw new RedriveTargetRefusedError(topic, group, `the topology names no group '${group}' of ${topic}`);
  }
}

/**
 * Where a replay plan's copies go: on Kafka back into the topic, on RabbitMQ into the group's work queue
 * (only that group's queue: a RabbitMQ destination's groups each have their own).
 */
export function replayTargetOf(plan: Pick<ReplayPlan, 'transport' | 'source' | 'group'>): string {
  return plan.transport === 'rabbitmq' ? destinationNames.workQueue(plan.source, plan.group) : plan.source;
}

/**
 * `reviewPlan` for a replay plan: its hash matches its content, its route holds (`checkReplayRoute`, its
 * target `replayTargetOf` it, on RabbitMQ its journal the destination's), and the audit log has its PLAN entry, whose actor is the planner. Resolves
 * with the planner.
 */
export async function reviewReplayPlan(
  plan: ReplayPlan,
  ledger: Pick<RedriveLedger, 'plannerOf'>,
  topology?: MessagingTopology,
): Promise<string> {
  if (!isPlanIntact(plan)) throw new ApprovalMismatchError('PLAN_EDITED');
  checkReplayRoute(plan.source, plan.group, topology);
  const differences: string[] = [];
  const target = replayTargetOf(plan);
  if (plan.target !== target) {
    differences.push(`target: the plan says '${plan.target}', this replay goes to '${target}'`);
  }
  if (plan.transport === 'rabbitmq' && plan.journal !== destinationNames.journal(plan.source)) {
    differences.push(
      `journal: the plan says '${String(plan.journal)}', ${plan.source}'s is '${destinationNames.journal(plan.source)}'`,
    );
  }
  const planner = await ledger.plannerOf(plan.hash);
  if (planner === undefined) {
    differences.push(
      `the audit log has no plan with this hash (${plan.hash}): the file was changed after ` +
        'nest-messaging replay plan wrote it, or the plan comes from another admin database',
    );
  } else if (planner !== plan.plannedBy) {
    differences.push(`planner: the plan says '${plan.plannedBy}', the audit log '${planner}'`);
  }
  if (differences.length > 0) throw new RedrivePlanAlteredError(plan.source, differences);
  return planner as string;
}
