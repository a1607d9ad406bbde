import { Client } from 'pg';
import {
  logicalNames,
  LogicalNames,
  createReplicationSlot,
  SqlRunner,
} from 'nest-reliable-messaging/testing';
import {
  LOGICAL_DECODING_SETTINGS,
  PostgresCluster,
  PostgresClusterOptions,
  startPrivatePostgres,
} from '../../harness/postgres-cluster';
import { createTestSchema, TestSchema } from '../../harness/postgres';

/** A private PostgreSQL cluster whose log a logical relay can read (`wal_level = logical`), plus `options`. */
export function startLogicalCluster(
  prefix: string,
  options: PostgresClusterOptions = {},
): Promise<PostgresCluster> {
  return startPrivatePostgres(prefix, {
    ...options,
    settings: { ...LOGICAL_DECODING_SETTINGS, ...options.settings },
  });
}

/** A suite's schema on a logical cluster, with the names of its outbox's slot. */
export interface LogicalSchema extends TestSchema {
  readonly names: LogicalNames;
  readonly sql: SqlRunner;
  /** `nest-messaging relay slot create` for this schema's outbox. */
  createSlot(): Promise<void>;
}

/**
 * A schema of the suite's own in the cluster's `postgres` database, and its slot (created unless told not to).
 * `query` opens a connection per statement, so that it works across restarts of the cluster.
 */
export async function createLogicalSchema(
  cluster: PostgresCluster,
  prefix: string,
  options: { createSlot?: boolean } = {},
): Promise<LogicalSchema> {
  const schema = await createTestSchema(prefix, cluster.url);
  const sql: SqlRunner = <R extends object>(text: string, params?: unknown[]) =>
    cluster.query<R>(text, params);
  const logical: LogicalSchema = {
    ...schema,
    async query<R extends object>(text: string, params?: unknown[]) {
      const client = new Client({
        connectionString: cluster.url,
        options: `-c search_path="${schema.name}"`,
      });
      client.on('error', () => undefined);
      await client.connect();
      try {
        return (await client.query(text, params)).rows as R[];
      } finally {
        await client.end().catch(() => undefined);
      }
    },
    names: logicalNames(schema.name),
    sql,
    createSlot: async () => {
      await createReplicationSlot(sql, logical.names);
    },
  };
  if (options.createSlot !== false) await logical.createSlot();
  return logical;
}
