import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { pgTimestamp } from '../../common/pg-timestamp';
import { quoteIdent } from '../../tables/postgres-tables';
import { RedriveLedgerMissingError } from '../../redrive/errors/redrive-ledger-missing.error';
import { AdminDatabaseOptions } from '../../redrive/ledger/postgres-redrive-ledger';
import { RedriveApproval } from '../../redrive/redrive-approval';
import { RedrivePlan } from '../../redrive/redrive-plan';
import { RedriveResult } from '../../redrive/redrive-result';
import { CreateConsolePlans1765065600000 } from '../../migrations/create-console-plans.migration';
import { ConsolePlan, ConsolePlanRefusal } from './console-plan';
import { ConsolePlanStore } from './console-plan-store.interface';

interface PlanRow {
  id: string;
  plan: RedrivePlan;
  approval: RedriveApproval | null;
  result: RedriveResult | null;
  /** `Date`s, or text where the application reads `timestamptz` as text: read through `pgTimestamp`. */
  executed_at: Date | string | null;
  stale_at: Date | string | null;
  refusals: Record<string, ConsolePlanRefusal>;
}

/**
 * The console's plans in the admin database (`messaging_console_plan`, migration
 * `CreateConsolePlans1765065600000`): plans survive a console restart and are shared by console
 * processes. Each step is one conditional UPDATE: of two approvals or executions stored at once, one wins.
 */
export class PostgresConsolePlanStore implements ConsolePlanStore {
  private readonly table: string;

  private constructor(private readonly dataSource: DataSource) {
    const schema = (dataSource.options as { schema?: string }).schema;
    this.table = `${schema ? `${quoteIdent(schema)}.` : ''}messaging_console_plan`;
  }

  /** Connects to the admin database; throws `RedriveLedgerMissingError` when the table is missing. */
  static async connect(options: AdminDatabaseOptions): Promise<PostgresConsolePlanStore> {
    const dataSource = new DataSource({
      type: 'postgres',
      url: options.url,
      schema: options.schema,
      logging: false,
      extra: { max: 2 },
    });
    await dataSource.initialize();
    const store = new PostgresConsolePlanStore(dataSource);
    try {
      const [{ found }] = await dataSource.query<Array<{ found: string | null }>>(
        'select to_regclass($1) as found',
        [store.table],
      );
      if (!found) throw new RedriveLedgerMissingError(store.table, CreateConsolePlans1765065600000.name);
    } catch (error) {
      await dataSource.destroy();
      throw error;
    }
    return store;
  }

  /** Inserts the plan under a new id. */
  async add(plan: RedrivePlan): Promise<ConsolePlan> {
    const id = randomUUID();
    await this.dataSource.query(
      `insert into ${this.table} (id, source, planned_by, plan_hash, plan) values ($1, $2, $3, $4, $5::jsonb)`,
      [id, plan.source, plan.plannedBy, plan.hash, JSON.stringify(plan)],
    );
    return { id, plan, refusals: {} };
  }

  /** The plan with this id, if kept (an id that is not a UUID is none). */
  async get(id: string): Promise<ConsolePlan | undefined> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
    const [row] = await this.dataSource.query<PlanRow[]>(`select * from ${this.table} where id = $1`, [id]);
    return row ? entryOf(row) : undefined;
  }

  /** The latest `limit` plans, newest first. */
  async list(filter: { readonly source?: string; readonly limit: number }): Promise<ConsolePlan[]> {
    const rows = await this.dataSource.query<PlanRow[]>(
      `select * from ${this.table} where $1::text is null or source = $1
       order by created_at desc, id limit $2`,
      [filter.source ?? null, filter.limit],
    );
    return rows.map(entryOf);
  }

  /** Sets the approval where there is none and no result; clears the approver's refusal. */
  async approved(id: string, approval: RedriveApproval, by: string): Promise<boolean> {
    const updated = await this.dataSource.query<[unknown[], number]>(
      `update ${this.table} set approval = $2::jsonb, refusals = refusals - $3::text
       where id = $1 and approval is null and result is null`,
      [id, JSON.stringify(approval), by],
    );
    return updated[1] === 1;
  }

  /** Sets the result where there is none; clears the executor's refusal. */
  async executed(id: string, result: RedriveResult, by: string): Promise<boolean> {
    const updated = await this.dataSource.query<[unknown[], number]>(
      `update ${this.table} set result = $2::jsonb, executed_at = now(), refusals = refusals - $3::text
       where id = $1 and result is null`,
      [id, JSON.stringify(result), by],
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
      [id, by, message],
    );
  }

  /** Closes the connections. */
  async close(): Promise<void> {
    await this.dataSource.destroy();
  }
}

function entryOf(row: PlanRow): ConsolePlan {
  return {
    id: row.id,
    plan: row.plan,
    approval: row.approval ?? undefined,
    result: row.result ?? undefined,
    executedAt: row.executed_at === null ? undefined : pgTimestamp(row.executed_at).toISOString(),
    staleAt: row.stale_at === null ? undefined : pgTimestamp(row.stale_at).toISOString(),
    refusals: row.refusals,
  };
}
