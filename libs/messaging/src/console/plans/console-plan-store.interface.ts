import { RedriveApproval } from '../../redrive/redrive-approval';
import { RedrivePlan } from '../../redrive/redrive-plan';
import { RedriveResult } from '../../redrive/redrive-result';
import { ConsolePlan } from './console-plan';

/**
 * Where the console keeps its plans between plan, approval and execution. Not trusted for what counts: an
 * execution is checked by the `RedriveService` against the audit log (the planner), the approval's
 * signature and the used approvals, whatever a store holds. `MemoryConsolePlanStore` (one process, lost on
 * restart) is the default; `PostgresConsolePlanStore` keeps them in the admin database.
 */
export interface ConsolePlanStore {
  /** Keeps `plan` under a new id. */
  add(plan: RedrivePlan): Promise<ConsolePlan>;
  /** The plan with this id, if kept. */
  get(id: string): Promise<ConsolePlan | undefined>;
  /** The latest `limit` plans, newest first; of one source when given. */
  list(filter: { readonly source?: string; readonly limit: number }): Promise<ConsolePlan[]>;
  /** Adds the approval; false (nothing changed) when the plan has one already or was executed. */
  approved(id: string, approval: RedriveApproval, by: string): Promise<boolean>;
  /** Adds the result; false (nothing changed) when the plan has one already. */
  executed(id: string, result: RedriveResult, by: string): Promise<boolean>;
  /** Marks the plan stale: an execution found its dead-letter queue changed. */
  stale(id: string): Promise<void>;
  /** Keeps `message` as the last refusal of `by`'s step on the plan. */
  refused(id: string, by: string, message: string): Promise<void>;
}
