import { DataSource } from 'typeorm';
import {
  fromPostgresJson,
  fromPostgresText,
  toPostgresJson,
  toPostgresText,
} from '../../common/postgres-text';
import { CreateRedriveBulkPlans1765497600000 } from '../../migrations/create-redrive-bulk-plans.migration';
import { quoteIdent } from '../../tables/postgres-tables';
import { AdminDatabaseOptions } from '../ledger/postgres-redrive-ledger';
import { PlannedMessage } from '../redrive-plan';
import { BulkItemStatus, StoredBulkItem } from './bulk-chunks';
import { BulkItem } from './bulk-selection';
import { connectAdminStore } from '../ledger/admin-store-connection';

/** The execution of a plan at scale, as the plan store keeps it. */
export interface BulkRun {
  /** The plan's hash, set when the plan was sealed. */
  readonly planHash?: string;
  /** The redrive id of its execution (its copies' `msg.redrive-id`); undefined before it started. */
  readonly redriveId?: string;
  /** The nonce of the approval the execution runs under (the latest, after a resume with a new one). */
  readonly nonce?: string;
  /** Who runs it (the latest run's executor). */
  readonly executedBy?: string;
  /** True once every item is done. */
  readonly finished: boolean;
}

/** How far an execution at scale got. */
export interface BulkCounts {
  /** Taken items moved. */
  readonly done: number;
  /** Taken items in all. */
  readonly taken: number;
  /** Items being moved when the last run stopped (a crash): checked against the source before resuming. */
  readonly inFlight: number;
}

/**
 * Where a plan at scale keeps its items and its execution's progress (the admin database): the plan carries
 * only their digest. Paged reads only: nothing here holds a whole plan.
 */
export interface BulkPlanStore {
  /** Opens a plan's items under a new `id`. */
  create(id: string, transport: 'kafka' | 'rabbitmq', source: string): Promise<void>;
  /** Appends items (ascending `seq`, after those there are). */
  append(id: string, items: readonly BulkItem[]): Promise<void>;
  /** Kafka: drops the kept items after the last taken one of their partition (they need not move). */
  trimKept(id: string): Promise<void>;
  /** Seals the items under the plan's hash: from then on only their status changes. */
  seal(id: string, planHash: string): Promise<void>;
  /** Up to `limit` items after `afterSeq` (-1: from the first), in order. */
  page(id: string, afterSeq: number, limit: number): Promise<StoredBulkItem[]>;
  /** The plan's execution, or undefined when no plan has this id. */
  run(id: string): Promise<BulkRun | undefined>;
  /** Records the execution's start (first run) or the approval it resumes under; false when another redrive id runs it. */
  start(id: string, run: { redriveId: string; nonce: string; executedBy: string }): Promise<boolean>;
  /** Sets the status of the items `seqs`. */
  mark(id: string, seqs: readonly number[], status: BulkItemStatus): Promise<void>;
  /** Marks the execution finished. */
  finish(id: string): Promise<void>;
  /** How far the execution got. */
  counts(id: string): Promise<BulkCounts>;
  /** Releases the store's connections. */
  close(): Promise<void>;
}

interface ItemRow {
  seq: number;
  role: 'take' | 'keep';
  message: unknown;
  status: BulkItemStatus;
}

/** `BulkPlanStore` in the admin database (migration `CreateRedriveBulkPlans1765497600000`). */
export class PostgresBulkPlanStore implements BulkPlanStore {
  private readonly plans: string;
  private readonly items: string;

  private constructor(private readonly dataSource: DataSource) {
    const schema = (dataSource.options as { schema?: string }).schema;
    const prefix = schema ? `${quoteIdent(schema)}.` : '';
    this.plans = `${prefix}messaging_redrive_bulk_plan`;
    this.items = `${prefix}messaging_redrive_bulk_item`;
  }

  /** Connects to the admin database; throws `RedriveLedgerMissingError` when the tables are missing. */
  static connect(options: AdminDatabaseOptions): Promise<PostgresBulkPlanStore> {
    const migration = CreateRedriveBulkPlans1765497600000.name;
    return connectAdminStore(
      options,
      (dataSource) => new PostgresBulkPlanStore(dataSource),
      (store) => [
        [store.plans, migration],
        [store.items, migration],
      ],
    );
  }

  /** Opens a plan's items under a new `id`. */
  async create(id: string, transport: 'kafka' | 'rabbitmq', source: string): Promise<void> {
    await this.dataSource.query(`insert into ${this.plans} (id, transport, source) values ($1, $2, $3)`, [
      id,
      transport,
      toPostgresText(source),
    ]);
  }

  /** Appends items (ascending `seq`). */
  async append(id: string, items: readonly BulkItem[]): Promise<void> {
    if (items.length === 0) return;
    await this.dataSource.query(
      `insert into ${this.items} (plan_id, seq, role, partition, message)
       select $1, x.seq, x.role, x.partition, x.message
       from jsonb_to_recordset($2::jsonb) as x(seq integer, role text, partition integer, message jsonb)`,
      [
        id,
        JSON.stringify(
          items.map((item) => ({
            seq: item.seq,
            role: item.role,
            partition: item.message.position.kind === 'partition' ? item.message.position.partition : null,
            message: JSON.parse(toPostgresJson(item.message)) as unknown,
          })),
        ),
      ],
    );
  }

  /** Kafka: drops the kept items after the last taken one of their partition. */
  async trimKept(id: string): Promise<void> {
    // The last taken item of each partition, computed once (a correlated max per row would be quadratic).
    await this.dataSource.query(
      `with last as materialized (
         select partition, max(seq) as seq from ${this.items}
         where plan_id = $1 and role = 'take' group by partition)
       delete from ${this.items} i where i.plan_id = $1 and i.role = 'keep'
       and i.seq > coalesce((select l.seq from last l where l.partition is not distinct from i.partition), -1)`,
      [id],
    );
  }

  /** Seals the items under the plan's hash. */
  async seal(id: string, planHash: string): Promise<void> {
    await this.dataSource.query(`update ${this.plans} set plan_hash = $2 where id = $1`, [id, planHash]);
  }

  /** Up to `limit` items after `afterSeq`, in order. */
  async page(id: string, afterSeq: number, limit: number): Promise<StoredBulkItem[]> {
    const rows = await this.dataSource.query<ItemRow[]>(
      `select seq, role, message, status from ${this.items}
       where plan_id = $1 and seq > $2 order by seq limit $3`,
      [id, afterSeq, limit],
    );
    return rows.map((row) => ({
      seq: row.seq,
      role: row.role,
      status: row.status,
      message: fromPostgresJson(row.message) as PlannedMessage,
    }));
  }

  /** The plan's execution, or undefined. */
  async run(id: string): Promise<BulkRun | undefined> {
    if (!isUuid(id)) return undefined;
    const [row] = await this.dataSource.query<
      Array<{
        plan_hash: string | null;
        redrive_id: string | null;
        nonce: string | null;
        executed_by: string | null;
        finished_at: unknown;
      }>
    >(`select plan_hash, redrive_id, nonce, executed_by, finished_at from ${this.plans} where id = $1`, [id]);
    if (!row) return undefined;
    return {
      ...(row.plan_hash ? { planHash: row.plan_hash } : {}),
      ...(row.redrive_id ? { redriveId: row.redrive_id } : {}),
      ...(row.nonce ? { nonce: row.nonce } : {}),
      ...(row.executed_by ? { executedBy: fromPostgresText(row.executed_by) } : {}),
      finished: row.finished_at !== null,
    };
  }

  /** Records the execution's start or resume; false when another redrive id runs it. */
  async start(id: string, run: { redriveId: string; nonce: string; executedBy: string }): Promise<boolean> {
    const updated = await this.dataSource.query<[unknown[], number]>(
      `update ${this.plans} set redrive_id = coalesce(redrive_id, $2::uuid), nonce = $3, executed_by = $4,
         started_at = coalesce(started_at, now())
       where id = $1 and (redrive_id is null or redrive_id = $2::uuid)`,
      [id, run.redriveId, run.nonce, toPostgresText(run.executedBy)],
    );
    return updated[1] === 1;
  }

  /** Sets the status of the items `seqs`. */
  async mark(id: string, seqs: readonly number[], status: BulkItemStatus): Promise<void> {
    if (seqs.length === 0) return;
    await this.dataSource.query(
      `update ${this.items} set status = $3 where plan_id = $1 and seq = any($2::integer[])`,
      [id, seqs, status],
    );
  }

  /** Marks the execution finished. */
  async finish(id: string): Promise<void> {
    await this.dataSource.query(`update ${this.plans} set finished_at = now() where id = $1`, [id]);
  }

  /** How far the execution got. */
  async counts(id: string): Promise<BulkCounts> {
    const [row] = await this.dataSource.query<Array<{ done: string; taken: string; in_flight: string }>>(
      `select count(*) filter (where role = 'take' and status = 'DONE') as done,
              count(*) filter (where role = 'take') as taken,
              count(*) filter (where status = 'IN_FLIGHT') as in_flight
       from ${this.items} where plan_id = $1`,
      [id],
    );
    return { done: Number(row.done), taken: Number(row.taken), inFlight: Number(row.in_flight) };
  }

  /** Releases the connection. */
  async close(): Promise<void> {
    await this.dataSource.destroy();
  }
}

function isUuid(id: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
}

/**
 * A `PostgresBulkPlanStore` that connects on first use (the CLI gives one to every `RedriveService` it
 * builds; only plans at scale use it): `close()` closes the connection if one was opened.
 */
export class LazyBulkPlanStore implements BulkPlanStore {
  private store?: Promise<PostgresBulkPlanStore>;

  constructor(private readonly options: AdminDatabaseOptions) {}

  private get(): Promise<PostgresBulkPlanStore> {
    this.store ??= PostgresBulkPlanStore.connect(this.options);
    return this.store;
  }

  async create(id: string, transport: 'kafka' | 'rabbitmq', source: string): Promise<void> {
    return (await this.get()).create(id, transport, source);
  }
  async append(id: string, items: readonly BulkItem[]): Promise<void> {
    return (await this.get()).append(id, items);
  }
  async trimKept(id: string): Promise<void> {
    return (await this.get()).trimKept(id);
  }
  async seal(id: string, planHash: string): Promise<void> {
    return (await this.get()).seal(id, planHash);
  }
  async page(id: string, afterSeq: number, limit: number): Promise<StoredBulkItem[]> {
    return (await this.get()).page(id, afterSeq, limit);
  }
  async run(id: string): Promise<BulkRun | undefined> {
    return (await this.get()).run(id);
  }
  async start(id: string, run: { redriveId: string; nonce: string; executedBy: string }): Promise<boolean> {
    return (await this.get()).start(id, run);
  }
  async mark(id: string, seqs: readonly number[], status: BulkItemStatus): Promise<void> {
    return (await this.get()).mark(id, seqs, status);
  }
  async finish(id: string): Promise<void> {
    return (await this.get()).finish(id);
  }
  async counts(id: string): Promise<BulkCounts> {
    return (await this.get()).counts(id);
  }
  async close(): Promise<void> {
    const store = this.store;
    this.store = undefined;
    if (store) await (await store).close();
  }
}
