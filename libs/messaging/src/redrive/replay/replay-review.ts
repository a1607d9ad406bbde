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
 * `reviewPlan` for a replay plan: its hash matches its content, its route holds (`checkReplayRoute`, its
 * target the topic it reads), and the audit log has its PLAN entry, whose actor is the planner. Resolves
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
  if (plan.target !== plan.source) {
    differences.push(`target: the plan says '${plan.target}', a replay goes back to '${plan.source}'`);
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
