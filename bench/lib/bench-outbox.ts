import { Connection, createConnection } from 'mysql2/promise';
import { DataSourceOptions } from 'typeorm';
import { MessagingMigrations, MysqlMessagingMigrations } from 'nest-reliable-messaging';
import type { WireMessage } from 'nest-reliable-messaging/testing';
import { infraEnv } from '../../tools/infra/env';
import { BENCH_EVENT_TYPE } from './bench-event';
import { benchName, databaseUrl, openClient } from './databases';
import {
  fillOutbox,
  FillOptions,
  outboxTable,
  pendingCount,
  pendingWireMessages,
  toWireMessage,
} from './outbox-fill';

/** Scheduled messages written outside the library, in one statement. */
export interface ScheduledFill {
  readonly destination: string;
  readonly rows: number;
  readonly keys: number;
  readonly pad: string;
  readonly dueInSeconds: number;
}

/** The databases the outbox scenarios (throughput, growth) run on, side by side in one run. */
export type BenchDialect = 'postgres' | 'mariadb';

/**
 * An outbox of one scenario's own, on PostgreSQL (a schema in the run's database) or MariaDB (a database
 * on the MariaDB server), with what the scenarios do to it outside the library: fill it, read it back as
 * the wire would carry it, keep its statistics fresh, measure it.
 */
export interface BenchOutbox {
  readonly dialect: BenchDialect;
  /** `PostgreSQL` or `MariaDB`. */
  readonly label: string;
  /** TypeORM's connection to it, with the library's migrations for its dialect. */
  readonly connection: DataSourceOptions;
  fill(options: FillOptions): Promise<void>;
  /**
   * Writes `rows` scheduled messages (`messaging_outbox_scheduled`, the columns `add()` with `deliverAt` writes),
   * due `dueInSeconds` from now (negative: already due), one millisecond apart.
   */
  fillScheduled(options: ScheduledFill): Promise<void>;
  /** Deletes the outbox rows of `destination` (through its index; the scheduled table is left alone). */
  deleteDestination(destination: string): Promise<void>;
  pendingWireMessages(): Promise<WireMessage[]>;
  pendingCount(): Promise<number>;
  deletePending(): Promise<void>;
  truncate(): Promise<void>;
  /** Fresh planner statistics (PostgreSQL: `analyze`; MariaDB: `analyze table`). */
  analyze(): Promise<void>;
  /** What autovacuum would have done (PostgreSQL: `vacuum`; MariaDB: nothing, its purge thread does it). */
  vacuum(): Promise<void>;
  /** Table and index size, MiB. */
  sizeMiB(): Promise<number>;
  /** Drops the schema or database and closes the connection. */
  drop(): Promise<void>;
}

/** A new outbox named after `prefix` on `dialect`; PostgreSQL's lives in the run's database `benchDbUrl`. */
export async function openBenchOutbox(
  dialect: BenchDialect,
  prefix: string,
  benchDbUrl: string,
): Promise<BenchOutbox> {
  const name = benchName(prefix);
  return dialect === 'postgres' ? postgresOutbox(name, benchDbUrl) : mariadbOutbox(name);
}

async function postgresOutbox(schema: string, benchDbUrl: string): Promise<BenchOutbox> {
  const db = await openClient(benchDbUrl);
  await db.query(`create schema "${schema}"`);
  const table = outboxTable(schema);
  return {
    dialect: 'postgres',
    label: 'PostgreSQL',
    connection: { type: 'postgres', url: benchDbUrl, schema, migrations: MessagingMigrations },
    fill: (options) => fillOutbox(db, schema, options),
    async fillScheduled(options) {
      await db.query(
        `insert into "${schema}".messaging_outbox_scheduled
           (message_id, destination, type, key, headers, payload, occurred_at, deliver_at)
         select gen_random_uuid(), $1, $2, 'key-' || (i % $3), '{}'::jsonb,
                jsonb_build_object('run', 'scheduled', 'seq', i, 'key', 'key-' || (i % $3), 'pad', $4::text),
                now(), now() + make_interval(secs => $5::double precision) + i * interval '1 millisecond'
         from generate_series(0::bigint, $6::bigint) as i`,
        [
          options.destination,
          BENCH_EVENT_TYPE,
          options.keys,
          options.pad,
          options.dueInSeconds,
          options.rows - 1,
        ],
      );
    },
    async deleteDestination(destination) {
      await db.query(`delete from ${table} where destination = $1`, [destination]);
    },
    pendingWireMessages: () => pendingWireMessages(db, schema),
    pendingCount: () => pendingCount(db, schema),
    deletePending: async () => void (await db.query(`delete from ${table} where sent_at is null`)),
    truncate: async () => void (await db.query(`truncate ${table}`)),
    analyze: async () => void (await db.query(`analyze ${table}, "${schema}".messaging_outbox_scheduled`)),
    vacuum: async () => void (await db.query(`vacuum ${table}`)),
    async sizeMiB() {
      const { rows } = await db.query<{ bytes: string }>(
        `select pg_total_relation_size('${table}') as bytes`,
      );
      return Math.round(Number(rows[0].bytes) / 2 ** 20);
    },
    async drop() {
      await db.query(`drop schema "${schema}" cascade`).catch(() => undefined);
      await db.end();
    },
  };
}

async function mariadbOutbox(database: string): Promise<BenchOutbox> {
  const serverUrl = infraEnv().mariadbUrl;
  const url = databaseUrl(serverUrl, database);
  const admin = await createConnection({ uri: serverUrl });
  await admin.query(`create database \`${database}\``);
  await admin.end();
  const db: Connection = await createConnection({ uri: url, timezone: 'Z' });
  const query = async <R>(sql: string, params: unknown[] = []) => (await db.query(sql, params))[0] as R;
  return {
    dialect: 'mariadb',
    label: 'MariaDB',
    connection: { type: 'mariadb', url, timezone: 'Z', migrations: MysqlMessagingMigrations },
    async fill(options) {
      const first = options.firstSeq ?? 0;
      // The columns, payload shape and keys OutboxService.add() writes (the same as on PostgreSQL).
      await query(
        `insert into messaging_outbox
           (message_id, destination, type, \`key\`, headers, payload, occurred_at, created_at, available_at, sent_at)
         with digits (d) as (select 0 union all select 1 union all select 2 union all select 3 union all
                             select 4 union all select 5 union all select 6 union all select 7 union all
                             select 8 union all select 9)
         select uuid(), ?, ?, concat('key-', i % ?), '{}',
                json_object('run', ?, 'seq', i, 'key', concat('key-', i % ?), 'pad', ?),
                utc_timestamp(6), utc_timestamp(6), utc_timestamp(6), if(?, utc_timestamp(6), null)
         from (${numbersFrom(first, options.rows)}) s`,
        [
          options.destination,
          BENCH_EVENT_TYPE,
          options.keys,
          options.run,
          options.keys,
          options.pad,
          options.sent ?? false,
        ],
      );
    },
    async fillScheduled(options) {
      await query(
        `insert into messaging_outbox_scheduled
           (message_id, destination, type, \`key\`, headers, payload, occurred_at, created_at, deliver_at)
         with digits (d) as (select 0 union all select 1 union all select 2 union all select 3 union all
                             select 4 union all select 5 union all select 6 union all select 7 union all
                             select 8 union all select 9)
         select uuid(), ?, ?, concat('key-', i % ?), '{}',
                json_object('run', 'scheduled', 'seq', i, 'key', concat('key-', i % ?), 'pad', ?),
                utc_timestamp(6), utc_timestamp(6),
                utc_timestamp(6) + interval ? second + interval i * 1000 microsecond
         from (${numbersFrom(0, options.rows)}) s`,
        [
          options.destination,
          BENCH_EVENT_TYPE,
          options.keys,
          options.keys,
          options.pad,
          Math.trunc(options.dueInSeconds),
        ],
      );
    },
    async deleteDestination(destination) {
      await query('delete from messaging_outbox where destination = ?', [destination]);
    },
    async pendingWireMessages() {
      const rows = await query<Array<Record<string, unknown>>>(
        `select id, message_id, destination, type, \`key\`, cast(headers as char) as headers,
                cast(payload as char) as payload, occurred_at
         from messaging_outbox where sent_at is null order by id`,
      );
      return rows.map((r) =>
        toWireMessage({
          id: String(r.id),
          message_id: r.message_id as string,
          destination: r.destination as string,
          type: r.type as string,
          key: r.key as string,
          headers: JSON.parse(r.headers as string) as Record<string, string>,
          payload: r.payload as string,
          occurred_at: r.occurred_at as Date,
        }),
      );
    },
    async pendingCount() {
      const [{ n }] = await query<Array<{ n: number }>>(
        'select count(*) as n from messaging_outbox where sent_at is null',
      );
      return Number(n);
    },
    deletePending: async () => void (await query('delete from messaging_outbox where sent_at is null')),
    truncate: async () => void (await query('truncate table messaging_outbox')),
    analyze: async () => void (await query('analyze table messaging_outbox, messaging_outbox_scheduled')),
    vacuum: async () => undefined,
    async sizeMiB() {
      const [{ bytes }] = await query<Array<{ bytes: number }>>(
        `select data_length + index_length as bytes from information_schema.tables
         where table_schema = database() and table_name = 'messaging_outbox'`,
      );
      return Math.round(Number(bytes) / 2 ** 20);
    },
    async drop() {
      await query(`drop database if exists \`${database}\``).catch(() => undefined);
      await db.end();
    },
  };
}

/**
 * `select i` for i from `first` to `first + count - 1`, from cross joins of `digits` (a recursive CTE would
 * stop at MariaDB's max_recursive_iterations, 1000 by default).
 */
function numbersFrom(first: number, count: number): string {
  const places = Math.max(1, Math.ceil(Math.log10(count)));
  const tables = Array.from({ length: places }, (_, p) => `digits d${p}`).join(', ');
  const value = Array.from({ length: places }, (_, p) => `d${p}.d * ${10 ** p}`).join(' + ');
  return `select ${Math.trunc(first)} + ${value} as i from ${tables} where ${value} < ${Math.trunc(count)}`;
}
