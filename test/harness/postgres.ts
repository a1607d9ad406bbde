import { Client } from 'pg';
import { infraEnv } from './infra';
import { uniqueName } from './names';
import type { TestDatabase } from './test-database';

/** A PostgreSQL schema of one test suite's own, dropped with everything in it by `drop()`. */
export interface TestSchema extends TestDatabase {
  readonly dialect: 'postgres';
  readonly databaseUrl: string;
  /** A new connected client whose search_path is the schema. Closed by `drop()`. */
  connect(): Promise<Client>;
}

/** A schema of the suite's own on the shared server, or on the server (database) `databaseUrl` names. */
export async function createTestSchema(
  prefix: string,
  databaseUrl: string = infraEnv().databaseUrl,
): Promise<TestSchema> {
  const name = uniqueName(prefix);
  const clients: Client[] = [];
  let shared: Promise<Client> | undefined;
  const admin = new Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    await admin.query(`create schema "${name}"`);
  } finally {
    await admin.end();
  }
  const schema: TestSchema = {
    dialect: 'postgres',
    name,
    databaseUrl,
    connection: { type: 'postgres', url: databaseUrl, schema: name },
    quote: (identifier) => `"${identifier.replace(/"/g, '""')}"`,
    async query<R extends object>(sql: string, params?: unknown[]) {
      shared ??= schema.connect();
      const result = await (await shared).query<R>(sql, params);
      return result.rows;
    },
    async connect() {
      const client = new Client({ connectionString: databaseUrl, options: `-c search_path="${name}"` });
      await client.connect();
      clients.push(client);
      return client;
    },
    async drop() {
      shared = undefined;
      await Promise.all(clients.splice(0).map((c) => c.end().catch(() => undefined)));
      const cleanup = new Client({ connectionString: databaseUrl });
      await cleanup.connect();
      try {
        await cleanup.query(`drop schema if exists "${name}" cascade`);
      } finally {
        await cleanup.end();
      }
    },
  };
  return schema;
}
