import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { z } from 'zod';
import { pgTimestamp } from '../../common/pg-timestamp';
import {
  fromPostgresJson,
  fromPostgresText,
  toPostgresJson,
  toPostgresText,
} from '../../common/postgres-text';
import { quoteIdent } from '../../tables/postgres-tables';
import { AdminDatabaseOptions } from '../../redrive/ledger/postgres-redrive-ledger';
import { RedriveApproval } from '../../redrive/redrive-approval';
import { isPlanIntact, RedrivePlan } from '../../redrive/redrive-plan';
import { parseRedriveApproval, parseRedrivePlan } from '../../redrive/redrive-plan.schema';
import { RedriveResult } from '../../redrive/redrive-result';
import { CreateConsolePlans1765065600000 } from '../../migrations/create-console-plans.migration';
import { ConsolePlan, ConsolePlanRefusal } from './console-plan';
import { ConsolePlanStore } from './console-plan-store.interface';
import { connectAdminStore } from '../../redrive/ledger/admin-store-connection';

interface PlanRow {
  id: string;
  source: string;
  planned_by: string;
  plan_hash: string;
  plan: unknown;
  approval: unknown;
  result: unknown;
  /** `Date`s, or text where the application reads `timestamptz` as text: read through `pgTimestamp`. */
  executed_at: Date | string | null;
  stale_at: Date | string | null;
  refusals: unknown;
}

/**
 * The console's plans in the admin database (`messaging_console_plan`, migration
 * `CreateConsolePlans1765065600000`): plans survive a console restart and are shared by console
 * processes. Each step is one conditional UPDATE: of two approvals or executions stored at once, one wins.
 * Every string goes in through `toPostgresText` and comes out through `fromPostgresText` (PostgreSQL
 * refuses NUL; the audit log keeps it the same way), so a plan reads back exactly and still matches its hash.
 */
export class PostgresConsolePlanStore implements ConsolePlanStore {
  private readonly table: string;

  private constructor(private readonly dataSource: DataSource) {
    const schema = (dataSource.options as { schema?: string }).schema;
    this.table = `${schema ? `${quoteIdent(schema)}.` : ''}messaging_console_plan`;
  }

  /** Connects to the admin database; throws `RedriveLedgerMissingError` when the table is missing. */
  static connect(options: AdminDatabaseOptions): Promise<PostgresConsolePlanStore> {
    return connectAdminStore(
      options,
      (dataSource) => new PostgresConsolePlanStore(dataSource),
      (store) => [[store.table, CreateConsolePlans1765065600000.name]],
    );
  }

  /** Inserts the plan under a new id. */
  async add(plan: RedrivePlan): Promise<ConsolePlan> {
    const id = randomUUID();
    await this.dataSource.query(
      `insert into ${this.table} (id, source, planned_by, plan_hash, plan) values ($1, $2, $3, $4, $5::jsonb)`,
      [id, toPostgresText(plan.source), toPostgresText(plan.plannedBy), plan.hash, toPostgresJson(plan)],
    );
    return { id, plan, refusals: {} };
  }

  /** The plan with this id, if kept (an id that is not a UUID is none). */
  async get(id: string): Promise<ConsolePlan | undefined> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
    const [row] = await this.dataSource.query<PlanRow[]>(`select * from ${this.table} where id = $1`, [id]);
    return row ? checkedEntry(row) : undefined;
  }

  /** The latest `limit` plans, newest first. */
  async list(filter: { readonly source?: string; readonly limit: number }): Promise<ConsolePlan[]> {
    const rows = await this.dataSource.query<PlanRow[]>(
      `select * from ${this.table} where $1::text is null or source = $1
       order by created_at desc, id limit $2`,
      [filter.source === undefined ? null : toPostgresText(filter.source), filter.limit],
    );
    return rows.flatMap((row) => {
      const entry = checkedEntry(row);
      return entry ? [entry] : [];
    });
  }

  /** Sets the approval where there is none and no result; clears the approver's refusal. */
  async approved(id: string, approval: RedriveApproval, by: string): Promise<boolean> {
    const updated = await this.dataSource.query<[unknown[], number]>(
      `update ${this.table} set approval = $2::jsonb, refusals = refusals - $3::text
       where id = $1 and approval is null and result is null`,
      [id, toPostgresJson(approval), toPostgresText(by)],
    );
    return updated[1] === 1;
  }

  /** Sets the result where there is none; clears the executor's refusal. */
  async executed(id: string, result: RedriveResult, by: string): Promise<boolean> {
    const updated = await this.dataSource.query<[unknown[], number]>(
      `update ${this.table} set result = $2::jsonb, executed_at = now(), refusals = refusals - $3::text
       where id = $1 and result is null`,
      [id, toPostgresJson(result), toPostgresText(by)],
    );
    return updated[1] === 1;
  }

  /** Marks the plan stale (once). */
  async stale(id: string): Promise<void> {
    await this.dataSource.query(
      `update ${this.table} set stale_at = now() where id = $1 and stale_at is null`,
      [id],
    );
  }

  /** Keeps the refusal for `by`. */
  async refused(id: string, by: string, message: string): Promise<void> {
    await this.dataSource.query(
      `update ${this.table}
       set refusals = refusals || jsonb_build_object($2::text, jsonb_build_object('message', $3::text,
         'at', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
       where id = $1`,
      [id, toPostgresText(by), toPostgresText(message)],
    );
  }

  /** Closes the connections. */
  async close(): Promise<void> {
    await this.dataSource.destroy();
  }
}

const logger = new Logger('PostgresConsolePlanStore');

const resultSchema = z.object({
  redriveId: z.string(),
  source: z.string(),
  target: z.string(),
  action: z.enum(['discard', 'edit']).optional(),
  redriven: z.number().int().nonnegative(),
  leftInSource: z.number().int().nonnegative(),
  messages: z.array(
    z.object({
      position: z.union([
        z.object({ kind: z.literal('queue'), index: z.number().int().nonnegative() }),
        z.object({
          kind: z.literal('partition'),
          partition: z.number().int().nonnegative(),
          offset: z.string().regex(/^\d+$/),
        }),
      ]),
      messageId: z.string().nullable(),
      status: z.enum(['REDRIVEN', 'NOT_CONFIRMED', 'NOT_ATTEMPTED', 'NOT_SETTLED']),
      error: z.string().optional(),
    }),
  ),
});

const refusalsSchema = z.record(z.string(), z.object({ message: z.string(), at: z.string() }));

/**
 * A row as the console may show it, or undefined. The table is writable by the everyday admin login
 * (issue 45 item 1), so nothing in it is taken on trust: the plan must parse, still match its hash and agree
 * with the row's `source`, `planned_by` and `plan_hash` columns, or the row is left out (logged). An approval,
 * a result or refusals that do not parse (or an approval of another plan, a result of another source) are
 * ignored, as if absent: what counts is checked again by the redrive (signatures, the audit log, nonces).
 */
export function checkedEntry(stored: PlanRow): ConsolePlan | undefined {
  const row = fromPostgres(stored);
  let plan: RedrivePlan;
  try {
    plan = parseRedrivePlan(row.plan);
  } catch {
    logger.warn(`Plan ${row.id} in the plan store does not parse as a plan: not shown.`);
    return undefined;
  }
  if (
    !isPlanIntact(plan) ||
    plan.hash !== row.plan_hash ||
    plan.source !== row.source ||
    plan.plannedBy !== row.planned_by
  ) {
    logger.warn(`Plan ${row.id} in the plan store does not match its hash or its columns: not shown.`);
    return undefined;
  }
  const ignored = (column: string) =>
    logger.warn(`Plan ${row.id}: its ${column} in the plan store does not validate: ignored.`);
  let approval: RedriveApproval | undefined;
  if (row.approval !== null && row.approval !== undefined) {
    const parsed = safely(() => parseRedriveApproval(row.approval));
    if (parsed && parsed.planHash === plan.hash) approval = parsed;
    else ignored('approval');
  }
  let result: RedriveResult | undefined;
  if (row.result !== null && row.result !== undefined) {
    const parsed = resultSchema.safeParse(row.result);
    if (parsed.success && parsed.data.source === plan.source) result = parsed.data;
    else ignored('result');
  }
  const refusals = refusalsSchema.safeParse(row.refusals);
  if (!refusals.success) ignored('refusals');
  return entryOf({ ...row, plan }, approval, result, refusals.success ? refusals.data : {});
}

/** The row's strings as they were before `toPostgresText` (the columns a step writes and the plan's own). */
function fromPostgres(row: PlanRow): PlanRow {
  return {
    ...row,
    source: fromPostgresText(row.source),
    planned_by: fromPostgresText(row.planned_by),
    plan: fromPostgresJson(row.plan),
    approval: fromPostgresJson(row.approval),
    result: fromPostgresJson(row.result),
    refusals: fromPostgresJson(row.refusals),
  };
}

function safely<T>(parse: () => T): T | undefined {
  try {
    return parse();
  } catch {
    return undefined;
  }
}

function entryOf(
  row: PlanRow & { plan: RedrivePlan },
  approval: RedriveApproval | undefined,
  result: RedriveResult | undefined,
  refusals: Record<string, ConsolePlanRefusal>,
): ConsolePlan {
  return {
    id: row.id,
    plan: row.plan,
    approval,
    result,
    executedAt: row.executed_at === null ? undefined : pgTimestamp(row.executed_at).toISOString(),
    staleAt: row.stale_at === null ? undefined : pgTimestamp(row.stale_at).toISOString(),
    refusals,
  };
}
