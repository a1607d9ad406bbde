import { startPrivateMariadb } from './mariadb-server';
import { PostgresClusterOptions, startPrivatePostgres } from './postgres-cluster';
import type { TestDialect } from './test-database';

/**
 * A database server of a suite's own that the suite may stop, crash and start again: a PostgreSQL cluster
 * (`postgres-cluster.ts`) or a MariaDB server (`mariadb-server.ts`).
 */
export interface PrivateDatabaseServer {
  /** `PostgreSQL` or `MariaDB`, for messages. */
  readonly label: string;
  readonly dialect: TestDialect;
  /** Creates a database; returns the DATABASE_URL a service is given. */
  createDatabase(name: string): Promise<string>;
  /** One statement on `database`, on a connection of its own; `$1`-style placeholders on both. */
  query<R extends object = Record<string, unknown>>(
    sql: string,
    params?: unknown[],
    database?: string,
  ): Promise<R[]>;
  /** `fast`: a clean shutdown; `immediate`: a crash (the server recovers at the next start). */
  stop(mode: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again after `stop()`; resolves once it accepts connections. */
  start(): Promise<void>;
  isUp(): Promise<boolean>;
  /** Stops it and removes its data. */
  destroy(): Promise<void>;
}

/** A private server of `dialect` (PostgreSQL started with `postgres`, e.g. `wal_level = logical`). */
export function startPrivateDatabaseServer(
  dialect: TestDialect,
  prefix: string,
  postgres?: PostgresClusterOptions,
): Promise<PrivateDatabaseServer> {
  return dialect === 'postgres' ? startPrivatePostgres(prefix, postgres) : startPrivateMariadb(prefix);
}
