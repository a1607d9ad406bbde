import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureDebeziumJars } from './debezium-jars';
import { readProperties, writeProperties } from './java-properties';
import { launchJava, logTail, recordedPid, sleep, stopProcess } from './java-process';
import { freePort } from './ports';

const LOG4J_CONFIG = path.resolve(__dirname, 'debezium', 'log4j2.properties');
/** The worker settings the guide gives (converters, offset flush): the records depend on them. */
const WORKER_PROPERTIES = path.resolve(__dirname, '..', '..', 'examples', 'debezium', 'worker.properties');

/** A connector's configuration: what a standalone worker reads from a `.properties` file. */
export type ConnectorProperties = Readonly<Record<string, string>>;

/** Options of one standalone Kafka Connect worker. */
export interface KafkaConnectOptions {
  /** The Kafka it produces to (`bootstrap.servers`). */
  readonly brokers: readonly string[];
  /** The connectors it runs; each needs a `name`. */
  readonly connectors: readonly ConnectorProperties[];
  /** Folder for configuration, source offsets, log and pid. Default: a new temporary folder. */
  readonly stateDir?: string;
  /** JVM heap. Default `512m`. */
  readonly heap?: string;
  /** More worker settings (over the defaults below), e.g. `{ 'offset.flush.interval.ms': '10000' }`. */
  readonly worker?: Readonly<Record<string, string>>;
  /** Progress lines (downloads, start). Default: silent. */
  readonly log?: (line: string) => void;
}

/** What `GET /connectors/<name>/status` answers. */
interface ConnectorStatus {
  readonly connector: { readonly state: string; readonly trace?: string };
  readonly tasks: ReadonlyArray<{ readonly id: number; readonly state: string; readonly trace?: string }>;
}

/**
 * A Kafka Connect worker in standalone mode (`ConnectStandalone`: source offsets in a file, no internal
 * topics), from the jars Maven fetched, with Debezium's PostgreSQL connector and the library's `OutboxHeaders`
 * transformation on its plugin path. Started in the background with `java -cp`; stopped (SIGTERM: the tasks
 * commit their offsets) and started again with its offsets kept, or killed as a crash would.
 */
export class KafkaConnectWorker {
  private restPort = 0;

  private constructor(
    private readonly options: KafkaConnectOptions,
    /** The worker's folder: `worker.properties`, a `.properties` file per connector, `offsets`, `connect.log`. */
    readonly stateDir: string,
  ) {}

  /** Starts a worker and resolves once every connector and task runs. */
  static async start(options: KafkaConnectOptions, timeoutMs = 180_000): Promise<KafkaConnectWorker> {
    const stateDir = options.stateDir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'kafka-connect-')));
    const worker = new KafkaConnectWorker(options, stateDir);
    await worker.start(timeoutMs);
    return worker;
  }

  get logFile(): string {
    return path.join(this.stateDir, 'connect.log');
  }

  private get pidFile(): string {
    return path.join(this.stateDir, 'connect.pid');
  }

  /** The REST API, e.g. `http://127.0.0.1:40123`. */
  get restUrl(): string {
    return `http://127.0.0.1:${this.restPort}`;
  }

  /** Starts the worker again after `stop()` or `kill()` (the offsets file kept); resolves once its tasks run. */
  async start(timeoutMs = 180_000): Promise<void> {
    if ((await this.pid()) !== undefined)
      throw new Error(`The Connect worker in ${this.stateDir} runs already.`);
    const started = Date.now();
    const install = await ensureDebeziumJars(this.options.log);
    this.restPort = await freePort();
    await fs.mkdir(this.stateDir, { recursive: true });
    const files = [path.join(this.stateDir, 'worker.properties')];
    await fs.writeFile(files[0], writeProperties(this.workerProperties(install.pluginPath)));
    for (const connector of this.options.connectors) {
      const file = path.join(this.stateDir, `${connector.name}.properties`);
      await fs.writeFile(file, writeProperties(connector));
      files.push(file);
    }
    await this.launch(install.classpath, files);
    this.options.log?.(
      `Kafka Connect ${install.connectVersion} with Debezium ${install.debeziumVersion} starting (log ${this.logFile})`,
    );
    for (const connector of this.options.connectors) {
      await this.waitUntilRunning(connector.name, started + timeoutMs);
    }
  }

  /** Stops the worker (SIGTERM: tasks stop and commit their offsets; SIGKILL after `graceMs`). */
  async stop(graceMs = 30_000): Promise<void> {
    const pid = await this.pid();
    if (pid !== undefined) await stopProcess(pid, this.pidFile, graceMs);
  }

  /** SIGKILL: no offsets committed since the last flush (a crash). */
  async kill(): Promise<void> {
    const pid = await this.pid();
    if (pid !== undefined) await stopProcess(pid, this.pidFile, 0);
  }

  /** Stops the worker and removes its folder. */
  async destroy(): Promise<void> {
    await this.stop();
    await fs.rm(this.stateDir, { recursive: true, force: true });
  }

  /** The connector's and its tasks' states (`RUNNING`, `FAILED`, …), from the REST API. */
  async status(name: string): Promise<ConnectorStatus | undefined> {
    try {
      const response = await fetch(`${this.restUrl}/connectors/${encodeURIComponent(name)}/status`, {
        signal: AbortSignal.timeout(5_000),
      });
      return response.ok ? ((await response.json()) as ConnectorStatus) : undefined;
    } catch {
      return undefined; // not listening yet
    }
  }

  /** The JVM's pid while it runs. */
  pid(): Promise<number | undefined> {
    return recordedPid(this.pidFile);
  }

  /** The last lines of the worker's log (for errors). */
  logTail(lines = 40): Promise<string> {
    return logTail(this.logFile, lines);
  }

  private workerProperties(pluginPath: readonly string[]): Record<string, string> {
    return {
      // examples/debezium/worker.properties: string converters (the router's JSON text and key as they
      // are), string headers, Debezium's position confirmed to PostgreSQL every second.
      ...readProperties(WORKER_PROPERTIES),
      'bootstrap.servers': this.options.brokers.join(','),
      'offset.storage.file.filename': path.join(this.stateDir, 'offsets'),
      'plugin.path': pluginPath.join(','),
      // Every plugin here declares itself in a ServiceLoader manifest: no scan of the plugins' classes.
      'plugin.discovery': 'service_load',
      listeners: `http://127.0.0.1:${this.restPort}`,
      ...this.options.worker,
    };
  }

  private async launch(classpath: string, files: string[]): Promise<void> {
    await launchJava(
      { logFile: this.logFile, pidFile: this.pidFile },
      [
        `-Xms${this.options.heap ?? '512m'}`,
        `-Xmx${this.options.heap ?? '512m'}`,
        '-XX:+UseG1GC',
        '-Djava.awt.headless=true',
        `-Dlog4j2.configurationFile=${LOG4J_CONFIG}`,
        '-cp',
        classpath,
        'org.apache.kafka.connect.cli.ConnectStandalone',
        ...files,
      ],
      'Java 17+ runs Kafka Connect',
    );
  }

  private async waitUntilRunning(name: string, deadline: number): Promise<void> {
    for (;;) {
      if ((await this.pid()) === undefined) {
        throw new Error(`The Kafka Connect worker exited while starting.\n${await this.logTail()}`);
      }
      const status = await this.status(name);
      const failed = [status?.connector, ...(status?.tasks ?? [])].find((s) => s?.state === 'FAILED');
      if (failed) {
        throw new Error(
          `Connector '${name}' failed: ${failed.trace?.split('\n').slice(0, 8).join('\n') ?? '(no trace)'}\n` +
            (await this.logTail()),
        );
      }
      if (
        status?.connector.state === 'RUNNING' &&
        status.tasks.length > 0 &&
        status.tasks.every((t) => t.state === 'RUNNING')
      ) {
        return;
      }
      if (Date.now() > deadline) {
        throw new Error(`Connector '${name}' was not running in time.\n${await this.logTail()}`);
      }
      await sleep(300);
    }
  }
}
