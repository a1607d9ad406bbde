import { randomUUID } from 'node:crypto';
import { RedriveApproval } from '../dead-letter/redrive/redrive-approval';
import { RedrivePlan } from '../dead-letter/redrive/redrive-plan';
import { RedriveResult } from '../dead-letter/redrive/redrive-result';

/** A plan made in the console, and what became of it. */
export interface ConsolePlan {
  readonly id: string;
  readonly plan: RedrivePlan;
  approval?: RedriveApproval;
  result?: RedriveResult;
  /** The last refusal of an approval or execution, shown with the plan. */
  refusal?: string;
}

/**
 * The console's plans between plan, approval and execution, in this process's memory (like the files the
 * CLI passes between people). What counts is in the audit log and the ledger: an approval runs once there.
 */
export class ConsolePlans {
  private readonly plans = new Map<string, ConsolePlan>();

  /** Keeps `plan` under a new id. */
  add(plan: RedrivePlan): ConsolePlan {
    const entry: ConsolePlan = { id: randomUUID(), plan };
    this.plans.set(entry.id, entry);
    return entry;
  }

  /** The plan with this id, if kept. */
  get(id: string): ConsolePlan | undefined {
    return this.plans.get(id);
  }

  /** Every kept plan, newest first. */
  all(): ConsolePlan[] {
    return [...this.plans.values()].reverse();
  }
}
