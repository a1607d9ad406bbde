import { execFile } from 'node:child_process';
import { existsSync, promises as fs, readdirSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freePort } from '../../tools/infra/ports';
import type { PrivateDatabaseServer } from './private-database-server';

const run = promisify(execFile);

/** Where Debian and Ubuntu install the server binaries, one folder per major version. */
const PACKAGED_ROOT = '/usr/lib/postgresql';
/** The OS user the server runs as when we are root (PostgreSQL refuses to run as root). */
const SERVER_USER = 'postgres';

/** How the cluster goes down in `restart()` / `stop()`: `pg_ctl -m`. */
export type ShutdownMode = 'smart' | 'fast' | 'immediate';

/** How a private cluster is made and started. */
export interface PostgresClusterOptions {
  /** Server settings given at every start (`-c name=value`), e.g. `{ wal_level: 'logical' }`. */
  readonly settings?: Readonly<Record<string, string | number>>;
  /** WAL segment size (`initdb --wal-segsize`), MB; default 16. Small ones make WAL limits quick to reach. */
  readonly walSegmentSizeMb?: number;
}

/** A cluster whose log a logical relay can read: `wal_level = logical`, room for slots and replication connections. */
export const LOGICAL_DECODING_SETTINGS = {
  wal_level: 'logical',
  max_replication_slots: 10,
  max_wal_senders: 10,
} as const;

/**
 * A PostgreSQL cluster of a suite's own: `initdb` into a temporary folder, a server on a free port of
 * 127.0.0.1 with trust authentication, which the suite may stop, restart or crash (`stop -m immediate`)
 * without touching the shared server on 5432. Start it with `startPrivatePostgres()`, remove it with
 * `destroy()`. As root, `initdb` and `pg_ctl` run as the `postgres` OS user, in folders it owns.
 */
export class PostgresCluster implements PrivateDatabaseServer {
  readonly label = 'PostgreSQL';
  readonly dialect = 'postgres' as const;

  private constructor(
    readonly port: number,
    /** The cluster's folder: `data/`, `socket/` and `server.log`. */
    readonly baseDir: string,
    /** The server's programs (`pg_ctl`, `pg_waldump`, …). */
    readonly binDir: string,
    private readonly settings: Readonly<Record<string, string | number>> = {},
  ) {}

  /** Server URL for the superuser `postgres`, database `postgres`. */
  get url(): string {
    return this.databaseUrl('postgres');
  }

  get logFile(): string {
    return path.join(this.baseDir, 'server.log');
  }

  /** The cluster's data directory (`pg_wal/` holds its WAL). */
  get dataDir(): string {
    return path.join(this.baseDir, 'data');
  }

  /** URL of `database` on this cluster. */
  databaseUrl(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  static async start(prefix = 'pg', options: PostgresClusterOptions = {}): Promise<PostgresCluster> {
    const binDir = findBinDir();
    const baseDir = await fs.mkdtemp(path.join(os.tmpdir(), `postgres-${prefix}-`));
    const cluster = new PostgresCluster(await freePort(), baseDir, binDir, options.settings);
    try {
      await fs.mkdir(path.join(baseDir, 'socket'));
      if (asRoot()) await run('chown', ['-R', `${SERVER_USER}:`, baseDir]);
      await cluster.pg('initdb', [
        '-D',
        cluster.dataDir,
        '-U',
        'postgres',
        '--auth=trust',
        '--encoding=UTF8',
        '--no-sync',
        ...(options.walSegmentSizeMb ? [`--wal-segsize=${options.walSegmentSizeMb}`] : []),
      ]);
      await cluster.startServer();
    } catch (error) {
      await cluster.destroy().catch(() => undefined);
      throw new Error(
        `Could not start a private PostgreSQL cluster in ${baseDir} (${describe(error)}). ` +
          `Is the server installed (initdb and pg_ctl in ${PACKAGED_ROOT}/<version>/bin, or PG_BIN_DIR)?`,
      );
    }
    return cluster;
  }

  /** Creates a database (owned by `postgres`) and returns its URL. */
  async createDatabase(name: string): Promise<string> {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`Not a database name: '${name}'.`);
    await this.query(`create database "${name}"`);
    return this.databaseUrl(name);
  }

  /** One statement on `database` (default `postgres`), on a connection of its own. */
  async query<R extends object = Record<string, unknown>>(
    sql: string,
    params: unknown[] = [],
    database = 'postgres',
  ): Promise<R[]> {
    const client = new Client({
      connectionString: this.databaseUrl(database),
      connectionTimeoutMillis: 5_000,
    });
    await client.connect();
    try {
      return (await client.query<R>(sql, params)).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** Stops the server: `fast` disconnects clients and shuts down cleanly; `immediate` is a crash. */
  async stop(mode: ShutdownMode = 'fast'): Promise<void> {
    await this.pg('pg_ctl', ['-D', this.dataDir, '-m', mode, '-w', 'stop']);
  }

  /** Starts the server again (after `stop()`); resolves once it accepts connections. */
  async start(): Promise<void> {
    await this.startServer();
  }

  /**
   * Restarts the server: every client connection is cut; the server refuses connections until it is back.
   * With `immediate`, the server restarts through crash recovery.
   */
  async restart(mode: ShutdownMode = 'fast'): Promise<void> {
    await this.stop(mode);
    await this.startServer();
  }

  /** True when the server answers a query. */
  async isUp(): Promise<boolean> {
    return this.query('select 1').then(
      () => true,
      () => false,
    );
  }

  /** Stops the server (immediately) and removes its folder. */
  async destroy(): Promise<void> {
    if (existsSync(path.join(this.dataDir, 'postmaster.pid'))) {
      await this.pg('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    }
    await fs.rm(this.baseDir, { recursive: true, force: true });
  }

  private async startServer(): Promise<void> {
    const options = [
      `-p ${this.port}`,
      '-c listen_addresses=127.0.0.1',
      `-k ${path.join(this.baseDir, 'socket')}`,
      '-c fsync=off',
      '-c max_connections=100',
      // pg_ctl hands these to a shell: a value with spaces or '%' (archive_command) is quoted.
      ...Object.entries(this.settings).map(([name, value]) => `-c ${name}=${shellQuoted(String(value))}`),
    ].join(' ');
    await this.pg('pg_ctl', [
      '-D',
      this.dataDir,
      '-l',
      this.logFile,
      '-o',
      options,
      '-w',
      '-t',
      '60',
      'start',
    ]);
  }

  /** Runs one of the server's programs, as the `postgres` OS user when we are root. */
  private async pg(program: string, args: string[]): Promise<string> {
    const binary = path.join(this.binDir, program);
    const [command, commandArgs] = asRoot()
      ? ['runuser', ['-u', SERVER_USER, '--', binary, ...args]]
      : [binary, args];
    try {
      const { stdout } = await run(command, commandArgs, { cwd: this.baseDir, timeout: 120_000 });
      return stdout;
    } catch (error) {
      const output = (error as { stderr?: string; stdout?: string }).stderr?.trim();
      const log = await fs.readFile(this.logFile, 'utf8').catch(() => '');
      throw new Error(
        `${program} ${args.join(' ')} failed: ${output || describe(error)}` +
          (log ? `\nLast lines of ${this.logFile}:\n${log.trimEnd().split('\n').slice(-10).join('\n')}` : ''),
      );
    }
  }
}

/** A private PostgreSQL cluster on a free port (see `PostgresCluster`). */
export function startPrivatePostgres(
  prefix?: string,
  options?: PostgresClusterOptions,
): Promise<PostgresCluster> {
  return PostgresCluster.start(prefix, options);
}

/** `PG_BIN_DIR`, else the newest version under /usr/lib/postgresql. */
function findBinDir(): string {
  if (process.env.PG_BIN_DIR) return process.env.PG_BIN_DIR;
  const versions = existsSync(PACKAGED_ROOT)
    ? readdirSync(PACKAGED_ROOT)
        .filter((v) => existsSync(path.join(PACKAGED_ROOT, v, 'bin', 'initdb')))
        .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a))
    : [];
  if (versions.length === 0) {
    throw new Error(
      `No PostgreSQL server binaries in ${PACKAGED_ROOT}/<version>/bin: install the server ` +
        '(Debian: apt-get install postgresql) or set PG_BIN_DIR.',
    );
  }
  return path.join(PACKAGED_ROOT, versions[0], 'bin');
}

function shellQuoted(value: string): string {
  return /^[A-Za-z0-9_.:/-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

function asRoot(): boolean {
  return process.getuid?.() === 0;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
