import type { ClientConfig, Pool } from 'pg';
import type { DataSource } from 'typeorm';

/** The part of TypeORM's PostgreSQL driver read here: the pg pool it made at `initialize()`. */
interface PostgresDriverInternals {
  readonly master?: Pool & { readonly options?: ClientConfig };
}

/**
 * The pg `Pool` of an initialised PostgreSQL DataSource. TypeORM has no public way to it: the NOTIFY
 * listener needs a connection of its own that stays open (LISTEN lasts as long as its session), taken from
 * the application's pool so that it counts in the pool's size. Reads `driver.master`, TypeORM's internal
 * field; `typeorm-postgres-pool.contract.test.ts` (integration) checks it against the installed TypeORM.
 */
export function typeormPostgresPool(dataSource: DataSource): Pool {
  const pool = (dataSource.driver as unknown as PostgresDriverInternals).master;
  if (!pool)
    throw new Error('TypeORM PostgreSQL driver has no pool (driver.master): is the DataSource initialised?');
  return pool;
}

/**
 * The connection settings of an initialised PostgreSQL DataSource, as pg took them (`pool.options`), for a
 * connection outside the pool (the logical relay's replication connection). A copy: changing it changes
 * nothing in the pool.
 */
export function typeormPostgresConnectionConfig(dataSource: DataSource): ClientConfig {
  return { ...typeormPostgresPool(dataSource).options };
}
