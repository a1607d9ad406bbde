import { createConnection } from 'mysql2/promise';
import { Client } from 'pg';
import { checkMariadb, checkPostgres } from '../infra/services';

/** A database server the services run on, and how to give each its database. */
export interface DatabaseServer {
  /** `PostgreSQL` or `MariaDB`, for messages. */
  readonly label: string;
  /** Answers, or throws `ServiceUnavailableError` saying how to start it. */
  check(): Promise<void>;
  /** Creates `database` unless it exists; resolves true when it created it. */
  ensure(database: string): Promise<boolean>;
  /** The DATABASE_URL of `database` for a service. */
  serviceUrl(database: string): string;
}

/** The URL of `database` on the server `serverUrl` points at (same host, port and credentials). */
export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The PostgreSQL server `serverUrl` points at. */
export function postgresServer(serverUrl: string): DatabaseServer {
  return {
    label: 'PostgreSQL',
    check: () => checkPostgres(serverUrl),
    ensure: (database) => ensureDatabase(serverUrl, database),
    serviceUrl: (database) => databaseUrl(serverUrl, database),
  };
}

/** The MariaDB (or MySQL) server `serverUrl` points at; the services get `mariadb://` URLs. */
export function mariadbServer(serverUrl: string): DatabaseServer {
  return {
    label: 'MariaDB',
    check: () => checkMariadb(serverUrl),
    async ensure(database) {
      checkName(database);
      const connection = await createConnection({ uri: serverUrl, connectTimeout: 5_000 });
      try {
        const [found] = await connection.query(
          'select 1 from information_schema.schemata where schema_name = ?',
          [database],
        );
        if ((found as unknown[]).length > 0) return false;
        await connection.query(`create database if not exists \`${database}\``);
        return true;
      } finally {
        await connection.end().catch(() => undefined);
      }
    },
    serviceUrl: (database) => databaseUrl(serverUrl, database).replace(/^mysql:/, 'mariadb:'),
  };
}

/** Creates `database` on the PostgreSQL server unless it exists. Resolves true when it created it. */
export async function ensureDatabase(serverUrl: string, database: string): Promise<boolean> {
  checkName(database);
  const client = new Client({ connectionString: serverUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount) return false;
    await client.query(`create database "${database}"`);
    return true;
  } catch (error) {
    // Someone else created it in the meantime.
    if ((error as { code?: string }).code === '42P04') return false;
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function checkName(database: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(database)) throw new Error(`Not a database name: '${database}'.`);
}
