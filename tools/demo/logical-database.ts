import { Client } from 'pg';
import { CliIo, runMessagingCli } from 'nest-reliable-messaging/testing';
import { LOGICAL_DECODING_SETTINGS, startPrivatePostgres } from '../../test/harness/postgres-cluster';
import { DatabaseServer, postgresServer } from './databases';
import { RegisterCleanup } from './demo-infrastructure';

/**
 * `--relay logical` (issue 30): the PostgreSQL server at `serverUrl` when its `wal_level` is `logical`, else
 * a private cluster with `wal_level = logical` on a free port, removed at the end (the shared server keeps
 * its settings: changing `wal_level` needs a restart).
 */
export async function logicalDatabaseServer(
  serverUrl: string,
  log: (line: string) => void,
  cleanup: RegisterCleanup,
): Promise<DatabaseServer> {
  if ((await walLevel(serverUrl)) === 'logical') {
    log('PostgreSQL has wal_level = logical: the logical relay reads its log.');
    return postgresServer(serverUrl);
  }
  log("PostgreSQL's wal_level is not logical: starting a private cluster with wal_level = logical...");
  const cluster = await startPrivatePostgres('demo-logical', { settings: LOGICAL_DECODING_SETTINGS });
  cleanup(`remove the demo's PostgreSQL cluster on port ${cluster.port}`, () => cluster.destroy());
  log(`Private PostgreSQL cluster (wal_level = logical) on 127.0.0.1:${cluster.port}.`);
  return postgresServer(cluster.url);
}

/**
 * What an operator runs before a service with `relay.mode: 'logical'` starts: `nest-messaging relay slot
 * create` on its database (in-process here). Returns the command's output lines.
 */
export async function createRelaySlot(serviceDatabaseUrl: string): Promise<string[]> {
  let out = '';
  let err = '';
  const io: CliIo = {
    env: { MESSAGING_RELAY_DATABASE_URL: serviceDatabaseUrl },
    out: (text) => void (out += text),
    err: (text) => void (err += text),
    cwd: process.cwd(),
  };
  const code = await runMessagingCli(['relay', 'slot', 'create'], io);
  if (code !== 0) throw new Error(`nest-messaging relay slot create failed: ${err.trim()}`);
  return out.trim().split('\n');
}

async function walLevel(serverUrl: string): Promise<string> {
  const client = new Client({ connectionString: serverUrl, connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    return (await client.query<{ wal_level: string }>('show wal_level')).rows[0].wal_level;
  } finally {
    await client.end().catch(() => undefined);
  }
}
