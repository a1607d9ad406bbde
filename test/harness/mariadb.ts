import { Connection, createConnection } from 'mysql2/promise';
import { databaseUrl } from '../../tools/demo/databases';
import { infraEnv } from './infra';
import { uniqueName } from './names';
import { TestDatabase } from './test-database';

/**
 * A MariaDB database of one test suite's own (the counterpart of a PostgreSQL schema), dropped with
 * everything in it by `drop()`. Times are read and written as UTC, as the library stores them.
 */
export async function createMariadbDatabase(prefix: string): Promise<TestDatabase> {
  const serverUrl = infraEnv().mariadbUrl;
  const name = uniqueName(prefix);
  await withConnection(serverUrl, (admin) => admin.query(`create database \`${name}\``));
  const url = databaseUrl(serverUrl, name);
  let shared: Promise<Connection> | undefined;
  return {
    dialect: 'mariadb',
    name,
    connection: { type: 'mariadb', url, timezone: 'Z' },
    async query<R extends object>(sql: string, params: unknown[] = []) {
      shared ??= createConnection({ uri: url, timezone: 'Z' });
      const [rows] = await (await shared).query(...positional(sql, params));
      return rows as R[];
    },
    quote: (identifier) => `\`${identifier.replace(/`/g, '``')}\``,
    async drop() {
      const connection = shared;
      shared = undefined;
      await connection?.then((c) => c.end()).catch(() => undefined);
      await withConnection(serverUrl, (admin) => admin.query(`drop database if exists \`${name}\``));
    },
  };
}

/** `$1`-style placeholders → `?`, with the parameters in the order the `?` appear. */
export function positional(sql: string, params: readonly unknown[]): [string, unknown[]] {
  const ordered: unknown[] = [];
  const text = sql.replace(/\$(\d+)/g, (_, n: string) => {
    ordered.push(params[Number(n) - 1]);
    return '?';
  });
  return [text, ordered];
}

async function withConnection<T>(url: string, work: (connection: Connection) => Promise<T>): Promise<T> {
  const connection = await createConnection({ uri: url });
  try {
    return await work(connection);
  } finally {
    await connection.end().catch(() => undefined);
  }
}
