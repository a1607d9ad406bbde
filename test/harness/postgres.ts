import { Client } from 'pg';
import { infraEnv } from './infra';
import { uniqueName } from './names';

/** A PostgreSQL schema of one test suite's own, dropped with everything in it by `drop()`. */
export interface TestSchema {
  readonly name: string;
  readonly databaseUrl: string;
  /** A connected client whose search_path is the schema. Closed by `drop()`. */
  connect(): Promise<Client>;
  drop(): Promise<void>;
}

export async function createTestSchema(prefix: string): Promise<TestSchema> {
  const databaseUrl = infraEnv().databaseUrl;
  const name = uniqueName(prefix);
  const clients: Client[] = [];
  const admin = new Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    await admin.query(`create schema "${name}"`);
  } finally {
    await admin.end();
  }
  return {
    name,
    databaseUrl,
    async connect() {
      const client = new Client({ connectionString: databaseUrl, options: `-c search_path="${name}"` });
      await client.connect();
      clients.push(client);
      return client;
    },
    async drop() {
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
}
