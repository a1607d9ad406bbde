import { RedriveApproval } from '../../redrive/redrive-approval';
import { RedrivePlan } from '../../redrive/redrive-plan';
import { RedriveResult } from '../../redrive/redrive-result';

/** A refusal of a step on a plan, kept for the person whose step it was. */
export interface ConsolePlanRefusal {
  /** What the console told them. */
  readonly message: string;
  /** When, ISO 8601. */
  readonly at: string;
}

/** A plan made in the console, and what became of it. */
export interface ConsolePlan {
  /** The console's id of the plan (a UUID), in its page's address. */
  readonly id: string;
  /** The dry run, as `RedriveService.plan()` made it. */
  readonly plan: RedrivePlan;
  /** The approval given in the console, once given. */
  readonly approval?: RedriveApproval;
  /** The execution's result, once executed. */
  readonly result?: RedriveResult;
  /** When it was executed, ISO 8601. */
  readonly executedAt?: string;
  /** When an execution found the dead-letter queue changed since the plan was made, ISO 8601. */
  readonly staleAt?: string;
  /**
   * The last refusal of each person's approval or execution, by user name: shown to that person only (the
   * next visitor did not cause it and may be allowed what they were refused).
   */
  readonly refusals: Readonly<Record<string, ConsolePlanRefusal>>;
}

/** Where a plan stands: what it says and which step it offers. */
export type ConsolePlanState =
  | { readonly kind: 'waiting' }
  | { readonly kind: 'approved'; readonly until: string }
  | { readonly kind: 'executed'; readonly redriveId: string; readonly redriven: number }
  | { readonly kind: 'stale'; readonly why: string }
  | { readonly kind: 'expired'; readonly why: string };

/** How long a plan waits for its approval before it is expired (and most likely stale): 24 hours. */
export const DEFAULT_PLAN_TTL_MS = 24 * 60 * 60_000;

/**
 * Where `entry` stands at `now`. Executed wins; then stale: an execution found the queue changed, or
 * `others` holds an executed plan of the same source that moved one of its messages after it was made
 * (the same fingerprint: that message is gone, execute would refuse); then expired: its approval ran out,
 * or it waited longer than `planTtlMs` for one. Only `waiting` offers Approve, only `approved` Execute.
 */
export function planState(
  entry: ConsolePlan,
  others: readonly ConsolePlan[],
  now: Date,
  planTtlMs = DEFAULT_PLAN_TTL_MS,
): ConsolePlanState {
  const { plan, approval, result } = entry;
  if (result) return { kind: 'executed', redriveId: result.redriveId, redriven: result.redriven };
  if (entry.staleAt) {
    return {
      kind: 'stale',
      why: `an execution at ${entry.staleAt} found the dead-letter queue changed since the plan was made`,
    };
  }
  const mine = new Set(plan.messages.map((m) => m.fingerprint));
  const mover = others.find(
    (o) =>
      o.id !== entry.id &&
      o.result &&
      o.plan.source === plan.source &&
      o.executedAt !== undefined &&
      o.executedAt >= plan.createdAt &&
      o.plan.messages.some((m, i) => mine.has(m.fingerprint) && o.result?.messages[i]?.status === 'REDRIVEN'),
  );
  if (mover) {
    return {
      kind: 'stale',
      why: `redrive ${mover.result?.redriveId} moved some of its messages at ${mover.executedAt}`,
    };
  }
  if (approval) {
    return Date.parse(approval.expiresAt) <= now.getTime()
      ? { kind: 'expired', why: `its approval by ${approval.approver} ran out at ${approval.expiresAt}` }
      : { kind: 'approved', until: approval.expiresAt };
  }
  if (Date.parse(plan.createdAt) + planTtlMs <= now.getTime()) {
    return {
      kind: 'expired',
      why: `it waited more than ${Math.round(planTtlMs / 3_600_000)} h for an approval`,
    };
  }
  return { kind: 'waiting' };
}

/** What a plan's state says, in a sentence. */
export function describeState(state: ConsolePlanState): string {
  switch (state.kind) {
    case 'waiting':
      return 'waiting for approval';
    case 'approved':
      return `approved, until ${state.until}`;
    case 'executed':
      return `executed (${state.redriven} redriven)`;
    case 'stale':
      return `stale: ${state.why}. Nothing can run from it: plan again`;
    case 'expired':
      return `expired: ${state.why}. Nothing can run from it: plan again`;
  }
}
