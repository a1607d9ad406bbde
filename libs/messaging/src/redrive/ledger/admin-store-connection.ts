import { DataSource } from 'typeorm';
import { checkAdminDatabaseUrl } from '../admin-connection';
import { RedriveLedgerMissingError } from '../errors/redrive-ledger-missing.error';

/** Where the admin database is. */
export interface AdminDatabaseOptions {
  /** `postgres://` URL of the admin database (`MESSAGING_ADMIN_DATABASE_URL`). */
  readonly url: string;
  /** Schema of the ledger's tables. Default: the search_path (`public`). */
  readonly schema?: string;
  /**
   * Accept a URL that reaches a host not on this machine without TLS (`sslmode=require`): the login's
   * password and the audit log then travel in clear text. Default false: refused (`checkAdminDatabaseUrl`).
   */
  readonly allowInsecureTransport?: boolean;
}

/** A table an admin store needs, and the migration that creates it (named when it is missing). */
export type AdminTable = readonly [table: string, migration: string];

/** Throws `RedriveLedgerMissingError` for the first of `tables` the admin database lacks. */
export async function checkAdminTables(dataSource: DataSource, tables: readonly AdminTable[]): Promise<void> {
  for (const [table, migration] of tables) {
    const [{ found }] = await dataSource.query<Array<{ found: string | null }>>(
      'select to_regclass($1) as found',
      [table],
    );
    if (!found) throw new RedriveLedgerMissingError(table, migration);
  }
}

/**
 * A store of the admin database beside the ledger (the console's plans, the plans at scale): the URL checked
 * as the ledger's (`checkAdminDatabaseUrl`), two connections, `make` given them, and its `tables` checked;
 * a missing one closes the connections and throws `RedriveLedgerMissingError`.
 */
export async function connectAdminStore<S>(
  options: AdminDatabaseOptions,
  make: (dataSource: DataSource) => S,
  tables: (store: S) => readonly AdminTable[],
): Promise<S> {
  checkAdminDatabaseUrl(options.url, options.allowInsecureTransport);
  const dataSource = new DataSource({
    type: 'postgres',
    url: options.url,
    schema: options.schema,
    logging: false,
    extra: { max: 2 },
  });
  await dataSource.initialize();
  const store = make(dataSource);
  try {
    await checkAdminTables(dataSource, tables(store));
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
  return store;
}
