import { MessagingTopology } from '../topology/messaging-topology';
import { ApprovalMismatchError } from './errors/approval-mismatch.error';
import { RedrivePlanAlteredError } from './errors/redrive-plan-altered.error';
import { archiveOf } from './dead-letter-archive';
import { RedriveLedger } from './ledger/redrive-ledger.interface';
import { isPlanIntact, RedrivePlan } from './redrive-plan';
import { deriveRoute } from './redrive-route';
import { isReplayPlan, ReplayPlan } from './replay/replay-plan';
import { reviewReplayPlan } from './replay/replay-review';
import { checkEditPlan } from './edit/edit-checks';

/**
 * What a plan file cannot vouch for itself, checked again wherever it is approved or executed: its hash
 * matches its content; its target and group are the ones its source derives (and the topology, when
 * given); the audit log has the PLAN entry `plan()` wrote for its hash, whose actor is the planner. The
 * hash is a plain SHA-256 that anyone can recompute: it shows an accidental change, never a deliberate one.
 * Resolves with the planner as the audit log names them; throws `RedrivePlanAlteredError` naming each
 * difference (or `ApprovalMismatchError` `PLAN_EDITED`, the route's own errors). A replay plan is reviewed
 * by its own route (`reviewReplayPlan`), on the same path.
 */
export async function reviewPlan(
  plan: RedrivePlan | ReplayPlan,
  ledger: Pick<RedriveLedger, 'plannerOf'>,
  topology?: MessagingTopology,
): Promise<string> {
  if (isReplayPlan(plan)) return reviewReplayPlan(plan, ledger, topology);
  if (!isPlanIntact(plan)) throw new ApprovalMismatchError('PLAN_EDITED');
  checkEditPlan(plan);
  const route = deriveRoute(plan.transport, plan.source, topology);
  const differences: string[] = [];
  // A discard's target is the source's archive; a redrive's, where the source's messages came from.
  const target = plan.action === 'discard' ? archiveOf(plan.source) : route.target;
  if (plan.target !== target) {
    differences.push(`target: the plan says '${plan.target}', ${plan.source} derives '${target}'`);
  }
  if (plan.group !== route.group) {
    differences.push(`group: the plan says '${plan.group}', the source derives '${route.group}'`);
  }
  const planner = await ledger.plannerOf(plan.hash);
  if (planner === undefined) {
    differences.push(
      `the audit log has no plan with this hash (${plan.hash}): the file was changed after ` +
        'nest-messaging dlq plan wrote it, or the plan comes from another admin database',
    );
  } else if (planner !== plan.plannedBy) {
    differences.push(`planner: the plan says '${plan.plannedBy}', the audit log '${planner}'`);
  }
  if (differences.length > 0) throw new RedrivePlanAlteredError(plan.source, differences);
  return planner as string;
}
