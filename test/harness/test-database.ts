import { createMariadbDatabase } from './mariadb';
import { createTestSchema } from './postgres';

/** The databases the suites run against: the library's two dialects. */
export type TestDialect = 'postgres' | 'mariadb';

/** Every dialect, for suites that run once per database (`describe.each(TEST_DIALECTS)`). */
export const TEST_DIALECTS: readonly TestDialect[] = ['postgres', 'mariadb'];

/** How TypeORM reaches a test database: its type, server URL and schema (PostgreSQL) or database (MariaDB). */
export type TestConnection =
  | { readonly type: 'postgres'; readonly url: string; readonly schema: string }
  | { readonly type: 'mariadb'; readonly url: string; readonly timezone: 'Z' };

/**
 * A place of one suite's own for the library's and the fixtures' tables: a PostgreSQL schema or a MariaDB
 * database, dropped with everything in it by `drop()`.
 */
export interface TestDatabase {
  readonly dialect: TestDialect;
  /** The schema's or database's name. */
  readonly name: string;
  readonly connection: TestConnection;
  /**
   * Runs a query on one shared connection of the suite, in the suite's schema or database. Placeholders are
   * written `$1`, `$2`… for both dialects; identifiers that are reserved in one of them go through `quote`.
   */
  query<R extends object = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
  /** An identifier quoted for this dialect (`"key"` or `` `key` ``). */
  quote(identifier: string): string;
  drop(): Promise<void>;
}

/** A label for test titles: `PostgreSQL` or `MariaDB`. */
export function dialectLabel(dialect: TestDialect): string {
  return dialect === 'postgres' ? 'PostgreSQL' : 'MariaDB';
}

/** A schema (PostgreSQL) or database (MariaDB) of the suite's own, named after `prefix`. */
export function createTestDatabase(dialect: TestDialect, prefix: string): Promise<TestDatabase> {
  return dialect === 'postgres' ? createTestSchema(prefix) : createMariadbDatabase(prefix);
}

/** `[label, dialect]` for every dialect: `describe.each(EACH_DATABASE)('… (%s)', (_, dialect) => …)`. */
export const EACH_DATABASE: ReadonlyArray<readonly [string, TestDialect]> = TEST_DIALECTS.map(
  (dialect) => [dialectLabel(dialect), dialect] as const,
);

/**
 * `it` on PostgreSQL, `it.skip` elsewhere: for the cases of a suite that runs on every database but test
 * nothing that depends on it (the suite says which), so that CI time goes to what differs.
 */
export function postgresOnly(dialect: TestDialect): jest.It {
  return dialect === 'postgres' ? it : it.skip;
}
