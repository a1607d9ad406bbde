import { Client } from 'pg';

/** The URL of `database` on the server `serverUrl` points at (same host, port and credentials). */
export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Creates `database` on the server unless it exists. Resolves true when it created it. */
export async function ensureDatabase(serverUrl: string, database: string): Promise<boolean> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(database)) throw new Error(`Not a database name: '${database}'.`);
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
