import { randomUUID } from 'node:crypto';
import { Clock, systemClock } from '../../common/clock';
import { RedriveApproval } from '../../redrive/redrive-approval';
import { RedrivePlan } from '../../redrive/redrive-plan';
import { RedriveResult } from '../../redrive/redrive-result';
import { ConsolePlan } from './console-plan';
import { ConsolePlanStore } from './console-plan-store.interface';

/**
 * The console's plans in this process's memory (like the files the CLI passes between people): a restart
 * forgets them. The default; an application with an admin database uses `PostgresConsolePlanStore`.
 */
export class MemoryConsolePlanStore implements ConsolePlanStore {
  private readonly plans = new Map<string, ConsolePlan>();

  /** @param clock - what its times (executed, stale, refused) are read from; only `now` is read. Default: the system clock. */
  constructor(private readonly clock: Pick<Clock, 'now'> = systemClock) {}

  /** Keeps `plan` under a new id. */
  async add(plan: RedrivePlan): Promise<ConsolePlan> {
    const entry: ConsolePlan = { id: randomUUID(), plan, refusals: {} };
    this.plans.set(entry.id, entry);
    return entry;
  }

  /** The plan with this id, if kept. */
  async get(id: string): Promise<ConsolePlan | undefined> {
    return this.plans.get(id);
  }

  /** The latest `limit` plans, newest first. */
  async list(filter: { readonly source?: string; readonly limit: number }): Promise<ConsolePlan[]> {
    return [...this.plans.values()]
      .reverse()
      .filter((p) => filter.source === undefined || p.plan.source === filter.source)
      .slice(0, filter.limit);
  }

  /** Adds the approval unless the plan has one or ran; clears the approver's refusal. */
  async approved(id: string, approval: RedriveApproval, by: string): Promise<boolean> {
    const entry = this.plans.get(id);
    if (!entry || entry.approval || entry.result) return false;
    this.plans.set(id, { ...entry, approval, refusals: without(entry.refusals, by) });
    return true;
  }

  /** Adds the result unless the plan ran; clears the executor's refusal. */
  async executed(id: string, result: RedriveResult, by: string): Promise<boolean> {
    const entry = this.plans.get(id);
    if (!entry || entry.result) return false;
    const executedAt = this.now();
    this.plans.set(id, { ...entry, result, executedAt, refusals: without(entry.refusals, by) });
    return true;
  }

  /** Marks the plan stale. */
  async stale(id: string): Promise<void> {
    const entry = this.plans.get(id);
    if (entry && !entry.staleAt) this.plans.set(id, { ...entry, staleAt: this.now() });
  }

  /** Keeps the refusal for `by`. */
  async refused(id: string, by: string, message: string): Promise<void> {
    const entry = this.plans.get(id);
    if (!entry) return;
    const refusal = { message, at: this.now() };
    this.plans.set(id, { ...entry, refusals: { ...entry.refusals, [by]: refusal } });
  }

  /** The current time, ISO 8601. */
  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }
}

function without<T>(record: Readonly<Record<string, T>>, key: string): Record<string, T> {
  const { [key]: _dropped, ...rest } = record;
  return rest;
}
