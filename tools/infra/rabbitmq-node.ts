import { execFile } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports';
import { isAlive } from './process-alive';

const run = promisify(execFile);

/** Debian and Ubuntu keep the real scripts here; the ones on PATH re-run them as the `rabbitmq` user. */
const PACKAGED_BIN = '/usr/lib/rabbitmq/bin';

/** Options of `RabbitMqNode.startPrivate()`. */
export interface PrivateNodeOptions {
  /** The Erlang cookie: nodes of one cluster share it. Default: a new one. */
  readonly cookie?: string;
  /** A node (`name@host`) the new node joins as it boots (same cookie); the caller checks it did. */
  readonly seed?: string;
}

/** How to reach one node with the RabbitMQ command line tools. */
interface NodeCli {
  /** `rabbitmqctl` to run. */
  readonly ctl: string;
  /** `-n <node>`, or nothing for the node the CLI talks to by default. */
  readonly nodeArgs: string[];
  readonly env: NodeJS.ProcessEnv;
}

/**
 * A RabbitMQ node driven with `rabbitmqctl`: the machine's local node (the demo stops and starts its
 * application for the broker-outage scenario), or a private node of a test suite's own, on free ports with
 * its own data, which the suite may stop and start without touching the node other suites use.
 */
export class RabbitMqNode {
  private constructor(
    /** The node's name, e.g. `rabbit@localhost`; undefined for the CLI's default node. */
    readonly nodeName: string | undefined,
    /** AMQP URL of the node. */
    readonly url: string,
    private readonly cli: NodeCli,
    /** A private node's folder (data, logs, cookie); removed by `destroy()`. */
    private readonly baseDir?: string,
    /** How to start a private node's server again (after `kill()`). */
    private readonly server?: { readonly exe: string; readonly env: NodeJS.ProcessEnv },
  ) {}

  /** The local node `rabbitmqctl` manages by default (the one serving `url`). */
  static local(url: string): RabbitMqNode {
    return new RabbitMqNode(undefined, url, { ctl: 'rabbitmqctl', nodeArgs: [], env: process.env });
  }

  /**
   * Starts a node of the caller's own: unique name, free AMQP and distribution ports on 127.0.0.1, no
   * plugins, data and logs in a temporary folder. Resolves once the node accepts connections. A node that
   * does not boot is tried once more, on new ports in a new folder (a port found free can be taken by another
   * process before the node binds it); the error names both tries and ends with the last lines of each log.
   */
  static async startPrivate(prefix = 'private', options: PrivateNodeOptions = {}): Promise<RabbitMqNode> {
    try {
      return await this.startPrivateOnce(prefix, options);
    } catch (first) {
      try {
        return await this.startPrivateOnce(prefix, options);
      } catch (second) {
        throw new Error(`${describe(first)}\nTried again: ${describe(second)}`);
      }
    }
  }

  private static async startPrivateOnce(prefix: string, options: PrivateNodeOptions): Promise<RabbitMqNode> {
    const bin = existsSync(path.join(PACKAGED_BIN, 'rabbitmq-server')) ? PACKAGED_BIN : undefined;
    const exe = (name: string) => (bin ? path.join(bin, name) : name);
    const baseDir = await fs.mkdtemp(path.join(os.tmpdir(), `rabbitmq-${prefix}-`));
    const [port, distPort] = [await freePort(), await freePort()];
    const nodeName = `${prefix.replace(/[^A-Za-z0-9_]/g, '_')}_${path.basename(baseDir).split('-').pop()}@localhost`;
    const emptyFile = async (name: string) => {
      const file = path.join(baseDir, name);
      await fs.writeFile(file, '');
      return file;
    };
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      // The Erlang cookie lives in HOME: the node and our CLI calls share this one.
      HOME: baseDir,
      RABBITMQ_NODENAME: nodeName,
      RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
      RABBITMQ_NODE_PORT: String(port),
      RABBITMQ_DIST_PORT: String(distPort),
      RABBITMQ_MNESIA_BASE: path.join(baseDir, 'mnesia'),
      RABBITMQ_LOG_BASE: path.join(baseDir, 'log'),
      RABBITMQ_PID_FILE: path.join(baseDir, 'rabbitmq.pid'),
      RABBITMQ_ENABLED_PLUGINS_FILE: await emptyFile('enabled_plugins'),
      // Not the machine's configuration: it names the shared node and its port.
      RABBITMQ_CONF_ENV_FILE: await emptyFile('rabbitmq-env.conf'),
      RABBITMQ_CONFIG_FILE: path.join(baseDir, 'rabbitmq'),
      RABBITMQ_ADVANCED_CONFIG_FILE: path.join(baseDir, 'advanced.config'),
    };
    if (options.cookie) {
      await fs.writeFile(path.join(baseDir, '.erlang.cookie'), options.cookie, { mode: 0o400 });
    }
    if (options.seed) {
      // Peer discovery from the configuration (classic_config): a blank node joins the listed node as it
      // boots, as `join_cluster` would after a first boot, without a second start of its application.
      await fs.writeFile(
        path.join(baseDir, 'rabbitmq.conf'),
        `cluster_formation.peer_discovery_backend = classic_config\n` +
          `cluster_formation.classic_config.nodes.1 = ${options.seed}\n`,
      );
    }
    const node = new RabbitMqNode(
      nodeName,
      `amqp://guest:guest@127.0.0.1:${port}`,
      { ctl: exe('rabbitmqctl'), nodeArgs: ['-n', nodeName], env },
      baseDir,
      { exe: exe('rabbitmq-server'), env },
    );
    try {
      await run(exe('rabbitmq-server'), ['-detached'], { env, cwd: baseDir });
      await node.awaitStartup(60_000);
    } catch (error) {
      const log = await lastLogLines(path.join(baseDir, 'log'), 15);
      await node.destroy();
      throw new Error(
        `Could not start a private RabbitMQ node (${describe(error)}). Is RabbitMQ installed ` +
          `(rabbitmq-server on PATH or in ${PACKAGED_BIN})?` +
          (log ? ` The end of its log (its folder is removed):\n${log}` : ''),
      );
    }
    return node;
  }

  /** Resolves when `rabbitmqctl` can reach and control the node; the error says why not. */
  async ping(): Promise<void> {
    await this.ctl(['ping'], 15_000);
  }

  /** Stops the RabbitMQ application; the Erlang node stays up (`rabbitmqctl stop_app`). */
  async stopApp(): Promise<void> {
    await this.ctl(['stop_app']);
  }

  /** Starts the application again and waits until it serves clients. */
  async startApp(): Promise<void> {
    await this.ctl(['start_app']);
    await this.awaitStartup(60_000);
  }

  /** Makes this private node a member of `seed`'s cluster (its own data is reset): `join_cluster`. */
  async joinCluster(seed: RabbitMqNode): Promise<void> {
    await this.ctl(['stop_app']);
    await this.ctl(['reset']);
    await this.ctl(['join_cluster', seed.nodeName as string], 120_000);
    await this.startApp();
  }

  /** The Erlang VM's pid of a private node (from its pid file). */
  async pid(): Promise<number> {
    const text = await fs.readFile(path.join(this.privateDir(), 'rabbitmq.pid'), 'utf8');
    const pid = Number.parseInt(text, 10);
    if (!Number.isInteger(pid)) throw new Error(`No pid in ${this.privateDir()}/rabbitmq.pid`);
    return pid;
  }

  /** Kills a private node's VM with SIGKILL, as a crash of its machine would; its data stays. */
  async kill(): Promise<void> {
    const pid = await this.pid();
    process.kill(pid, 'SIGKILL');
    while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 100));
  }

  /** Starts a killed private node again on its data; resolves once it serves clients. */
  async restart(): Promise<void> {
    if (!this.server) throw new Error('Only a private node is restarted.');
    // Its own folder as the working directory: a crashed node writes MnesiaCore dumps there.
    await run(this.server.exe, ['-detached'], { env: this.server.env, cwd: this.privateDir() });
    await this.awaitStartup(120_000);
  }

  /** Freezes (SIGSTOP) or thaws (SIGCONT) a private node's VM: to its peers it is partitioned away. */
  async suspend(frozen: boolean): Promise<void> {
    process.kill(await this.pid(), frozen ? 'SIGSTOP' : 'SIGCONT');
  }

  /** `rabbitmqctl` on this node with `args`; its output. */
  async rabbitmqctl(args: string[], timeoutMs = 60_000): Promise<string> {
    return this.ctl(args, timeoutMs);
  }

  private privateDir(): string {
    if (!this.baseDir) throw new Error('Only a private node has a pid file of ours.');
    return this.baseDir;
  }

  /** Stops a private node and removes its folder. Refuses on the local node. */
  async destroy(): Promise<void> {
    if (!this.baseDir) throw new Error('Only a private node is destroyed; the local node is left alone.');
    const pid = await this.pid().catch(() => undefined);
    if (pid !== undefined && isAlive(pid)) process.kill(pid, 'SIGCONT'); // a suspended node cannot stop
    await this.ctl(['stop'], 30_000).catch(() => undefined);
    // Whatever `stop` did (a clustered node may wait for its peers), the VM must not outlive its folder.
    if (pid !== undefined && isAlive(pid)) process.kill(pid, 'SIGKILL');
    await fs.rm(this.baseDir, { recursive: true, force: true });
  }

  /**
   * Kills a private node's VM (SIGKILL) and removes its folder: for a node whose data goes with it, where a
   * graceful `stop` only costs time (a clustered node's stop waits for its peers, up to its 30 s timeout).
   */
  async discard(): Promise<void> {
    const baseDir = this.privateDir();
    const pid = await this.pid().catch(() => undefined);
    if (pid !== undefined && isAlive(pid)) {
      process.kill(pid, 'SIGKILL');
      while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await fs.rm(baseDir, { recursive: true, force: true });
  }

  private async awaitStartup(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    // `await_startup` fails at once while the node has not registered yet: ping until it has.
    for (;;) {
      try {
        await this.ctl(['ping'], 10_000);
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    }
    await this.ctl(['await_startup', '--timeout', String(Math.ceil(timeoutMs / 1000))], timeoutMs + 5_000);
  }

  private async ctl(args: string[], timeoutMs = 60_000): Promise<string> {
    try {
      const { stdout } = await run(this.cli.ctl, ['-q', ...this.cli.nodeArgs, ...args], {
        env: this.cli.env,
        timeout: timeoutMs,
      });
      return stdout;
    } catch (error) {
      const output = (error as { stderr?: string }).stderr?.trim();
      throw new Error(
        `rabbitmqctl ${args.join(' ')} failed${this.nodeName ? ` on ${this.nodeName}` : ''}: ${output || describe(error)}`,
      );
    }
  }
}

/** The last `count` lines of each log file in `dir` (empty when there is none). */
async function lastLogLines(dir: string, count: number): Promise<string> {
  const files = await fs.readdir(dir).catch(() => [] as string[]);
  const parts: string[] = [];
  for (const file of files.filter((f) => f.endsWith('.log'))) {
    const text = await fs.readFile(path.join(dir, file), 'utf8').catch(() => '');
    const lines = text.trimEnd().split('\n').slice(-count);
    if (lines.join('').trim()) parts.push(`${file}:\n${lines.join('\n')}`);
  }
  return parts.join('\n');
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
