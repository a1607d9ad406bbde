import { ChildProcess, execFile, spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { createConnection } from 'mysql2/promise';
import { freePort } from '../../tools/infra/ports';
import { positional } from './mariadb';
import type { PrivateDatabaseServer } from './private-database-server';

const run = promisify(execFile);

/**
 * A MariaDB server of a suite's own: `mariadb-install-db` into a temporary folder, `mariadbd` on a free port
 * of 127.0.0.1 (root without a password), which the suite may shut down, crash (SIGKILL: InnoDB recovers
 * at the next start) and start again without touching the shared server on 3306. Durability is relaxed
 * (the log is flushed once a second), as for the private PostgreSQL clusters.
 */
export class MariadbServer implements PrivateDatabaseServer {
  readonly label = 'MariaDB';
  readonly dialect = 'mariadb' as const;
  private process?: ChildProcess;

  private constructor(
    readonly port: number,
    /** The server's folder: `data/`, its socket, pid file and `server.log`. */
    readonly baseDir: string,
  ) {}

  get logFile(): string {
    return path.join(this.baseDir, 'server.log');
  }

  private get socket(): string {
    return path.join(this.baseDir, 'mysqld.sock');
  }

  /** URL of `database` on this server, for a client of the tests. */
  databaseUrl(database: string): string {
    return `mysql://root@127.0.0.1:${this.port}/${database}`;
  }

  static async start(prefix = 'mariadb'): Promise<MariadbServer> {
    const baseDir = await fs.mkdtemp(path.join(os.tmpdir(), `mariadb-${prefix}-`));
    const server = new MariadbServer(await freePort(), baseDir);
    try {
      await run(
        'mariadb-install-db',
        [
          '--no-defaults',
          `--datadir=${path.join(baseDir, 'data')}`,
          '--auth-root-authentication-method=normal',
          '--skip-test-db',
          ...asRoot(),
        ],
        { cwd: baseDir, timeout: 120_000 },
      );
      await server.start();
    } catch (error) {
      await server.destroy().catch(() => undefined);
      throw new Error(
        `Could not start a private MariaDB server in ${baseDir} (${describe(error)}). Is the server installed ` +
          '(mariadb-install-db and mariadbd; Debian: apt-get install mariadb-server)?',
      );
    }
    return server;
  }

  /**
   * Creates a database and returns the URL a service is given: `mysql://`, so that the services run with
   * TypeORM's `mysql` type, as on a MySQL server (no `INSERT … RETURNING`); the demo runs the `mariadb` type.
   */
  async createDatabase(name: string): Promise<string> {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`Not a database name: '${name}'.`);
    await this.query(`create database \`${name}\``);
    return this.databaseUrl(name);
  }

  /** One statement (`$1` placeholders) on `database`, on a connection of its own. */
  async query<R extends object = Record<string, unknown>>(
    sql: string,
    params: unknown[] = [],
    database?: string,
  ): Promise<R[]> {
    const connection = await createConnection({
      uri: this.databaseUrl(database ?? ''),
      connectTimeout: 5_000,
      timezone: 'Z',
    });
    try {
      const [rows] = await connection.query(...positional(sql, params));
      return rows as R[];
    } finally {
      await connection.end().catch(() => undefined);
    }
  }

  /** `fast`: a clean shutdown (clients are disconnected); `immediate`: SIGKILL, a crash. */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    if (mode === 'immediate') child.kill('SIGKILL');
    else await run('mariadb-admin', ['--no-defaults', '-uroot', `--socket=${this.socket}`, 'shutdown']);
    await exited;
    this.process = undefined;
  }

  /** Starts the server (after `stop()`); resolves once it accepts connections. */
  async start(): Promise<void> {
    const child = spawn(
      'mariadbd',
      [
        '--no-defaults',
        `--datadir=${path.join(this.baseDir, 'data')}`,
        `--port=${this.port}`,
        '--bind-address=127.0.0.1',
        `--socket=${this.socket}`,
        `--pid-file=${path.join(this.baseDir, 'mysqld.pid')}`,
        `--log-error=${this.logFile}`,
        '--innodb-buffer-pool-size=64M',
        '--innodb-log-file-size=32M',
        '--innodb-flush-log-at-trx-commit=2',
        '--skip-log-bin',
        '--max-connections=200',
        ...asRoot(),
      ],
      { cwd: this.baseDir, stdio: 'ignore' },
    );
    this.process = child;
    const deadline = Date.now() + 60_000;
    while (!(await this.isUp())) {
      if (child.exitCode !== null || Date.now() > deadline) {
        const log = await fs.readFile(this.logFile, 'utf8').catch(() => '');
        child.kill('SIGKILL');
        throw new Error(
          `mariadbd did not start on port ${this.port}` +
            (log
              ? `; last lines of ${this.logFile}:\n${log.trimEnd().split('\n').slice(-10).join('\n')}`
              : ''),
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** True when the server answers a query. */
  async isUp(): Promise<boolean> {
    return this.query('select 1').then(
      () => true,
      () => false,
    );
  }

  /** Kills the server and removes its folder. */
  async destroy(): Promise<void> {
    await this.stop('immediate').catch(() => undefined);
    await fs.rm(this.baseDir, { recursive: true, force: true });
  }
}

/** A private MariaDB server on a free port (see `MariadbServer`). */
export function startPrivateMariadb(prefix?: string): Promise<MariadbServer> {
  return MariadbServer.start(prefix);
}

/** mariadbd refuses to run as root unless told to. */
function asRoot(): string[] {
  return process.getuid?.() === 0 ? ['--user=root'] : [];
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
