import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** The URL of database `name` on the server `serverUrl` points at. */
export function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A name no other run uses: lower-case letters, digits and '_' (valid for PostgreSQL, Kafka and RabbitMQ). */
export function benchName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
}

/** Runs `work` with a connected client, and closes it. */
export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Databases of the bench's own: created on demand and dropped at the end, so that nothing else counts in
 * their statistics and nothing is left behind.
 */
export class BenchDatabases {
  private readonly created: string[] = [];

  constructor(readonly serverUrl: string) {}

  /** Creates database `name`; returns its URL. */
  async create(name: string): Promise<string> {
    await withClient(this.serverUrl, (client) => client.query(`create database "${name}"`));
    this.created.push(name);
    return databaseUrl(this.serverUrl, name);
  }

  /** Drops database `name` now (closing what is still connected to it). */
  async drop(name: string): Promise<void> {
    const index = this.created.indexOf(name);
    if (index >= 0) this.created.splice(index, 1);
    await withClient(this.serverUrl, (client) =>
      client.query(`drop database if exists "${name}" with (force)`),
    );
  }

  /** Drops every database created here (closing what is still connected to them). */
  async dropAll(): Promise<void> {
    const names = this.created.splice(0);
    if (names.length === 0) return;
    await withClient(this.serverUrl, async (client) => {
      for (const name of names) {
        await client.query(`drop database if exists "${name}" with (force)`).catch(() => undefined);
      }
    });
  }
}

/** A connected client (the caller ends it). */
export async function openClient(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  // A dropped database ends its sessions: that must not crash the bench while it cleans up.
  client.on('error', () => undefined);
  await client.connect();
  return client;
}
