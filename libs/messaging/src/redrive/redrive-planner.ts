import { KeySecret } from '../failure/key-secret';
import { MessagingTopology } from '../topology/messaging-topology';
import { archiveOf } from './dead-letter-archive';
import { DeadLetterBackend } from './dead-letter-backend.interface';
import { describeRecord } from './dead-letter-record';
import { RedriveTargetRefusedError } from './errors/redrive-target-refused.error';
import { readPlanContents } from './plan-contents';
import { checkBatchSize, checkDistinctTarget } from './redrive-guards';
import { RedriveLimits } from './redrive-limits';
import { RedrivePlan, sealPlan } from './redrive-plan';
import { checkTarget, deriveRoute, RedriveRoute } from './redrive-route';
import { RedrivePlanRequest } from './redrive-service-options';

/** What a dry run reads and dates a plan with, besides the request. */
export interface PlanningContext {
  readonly backend: DeadLetterBackend;
  readonly topology?: MessagingTopology;
  readonly keySecret?: KeySecret;
  /** The planner the plan names (`plannedBy`). */
  readonly actor: string;
  /** When the plan is made, ms since the epoch. */
  readonly now: number;
  /** Bytes the plan's read may hold (`RedriveLimits.READ_BUDGET_BYTES` when absent). */
  readonly maxBytes?: number;
}

/**
 * The route of a plan's request, derived from the source's name and the topology before anything is read;
 * refuses a target the request names that is not that route's (or is the source).
 */
export function requestedRoute(
  request: Pick<RedrivePlanRequest, 'source' | 'target'>,
  transport: 'kafka' | 'rabbitmq',
  topology: MessagingTopology | undefined,
): RedriveRoute {
  if (request.target !== undefined) {
    checkDistinctTarget(request.source, request.target);
    checkTarget(request.source, request.target);
  }
  const route = deriveRoute(transport, request.source, topology);
  if (request.target !== undefined && request.target !== route.target) {
    throw new RedriveTargetRefusedError(
      request.source,
      request.target,
      `its messages go back to '${route.target}' only`,
    );
  }
  return route;
}

/**
 * A dry run (`RedriveService.plan()` without its audit entry): checks the request, derives the route from
 * the source's name and the topology before anything is read, reads what the plan takes (settling nothing)
 * and seals the plan. Throws the guard's `RedriveRefusedError` when the request is refused.
 */
export async function buildPlan(request: RedrivePlanRequest, context: PlanningContext): Promise<RedrivePlan> {
  const limit = request.limit ?? RedriveLimits.MAX_BATCH;
  checkBatchSize(limit);
  const { backend } = context;
  const route = requestedRoute(request, backend.kind, context.topology);
  const action = request.action ?? 'redrive';
  // A caller without types (a form) cannot make an edit plan here: edits carry their diff (`planEdit()`).
  if (action !== 'redrive' && action !== 'discard')
    throw new TypeError(`unknown plan action '${String(action)}'`);
  const { records, depth, extra } = await readPlanContents(backend, route, {
    source: request.source,
    limit,
    selection: request.selection,
    action,
    keySecret: context.keySecret,
    now: context.now,
    maxBytes: context.maxBytes,
  });
  return sealPlan({
    version: 2,
    transport: backend.kind,
    plannedBy: context.actor,
    source: request.source,
    target: action === 'discard' ? archiveOf(request.source) : route.target,
    group: route.group,
    createdAt: new Date(context.now).toISOString(),
    depth,
    messages: records.map(describeRecord),
    ...extra,
  });
}
