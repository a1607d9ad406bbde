import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Kafka, logLevel, SASLOptions } from 'kafkajs';
// The library's mend of kafkajs's negative timer (Node 24 prints a TimeoutNegativeWarning at every first
// request, kafkajs#1751). These probes run before the package is built (`npm run demo` starts Kafka first),
// so they take it from its source: one file, no imports of its own.
// eslint-disable-next-line no-restricted-imports -- see above
import { patchKafkajsRequestQueue } from '../../libs/messaging/src/transports/kafka/kafkajs-request-queue.patch';
import { cacheRoot, ensureKafkaJars, explainToolFailure, pinnedKafkaVersion } from './kafka-jars';
import { launchJava, logTail, recordedPid, sleep, stopProcess } from './java-process';
import { portOpen } from './ports';

const run = promisify(execFile);
const LOG4J_CONFIG = path.resolve(__dirname, 'kafka', 'log4j2.properties');

/** Options of one local single-node KRaft broker (broker and controller in one JVM). */
export interface KafkaBrokerOptions {
  /** Client port on 127.0.0.1. Default 9092. */
  port?: number;
  /** Controller (KRaft quorum) port. Default `port + 1`. */
  controllerPort?: number;
  /** Folder for data, config, log and pid. Default `<cache>/brokers/<port>`. */
  stateDir?: string;
  /** JVM heap. Default `768m`. */
  heap?: string;
  /** Partitions of auto-created topics. Default 3. */
  numPartitions?: number;
  /** Progress lines (downloads, start). Default: silent. */
  log?: (line: string) => void;
  /**
   * SASL/SCRAM on the client listener and `StandardAuthorizer` ACLs (nothing is allowed without an ACL).
   * Default: a PLAINTEXT broker without ACLs.
   */
  sasl?: KafkaBrokerSasl;
  /** One node of a KRaft cluster (issue 19) instead of a single node. Default: a single node. */
  cluster?: KafkaClusterMember;
  /**
   * A second PLAINTEXT listener for clients that reach the broker through a proxy (a test's fault proxy): it
   * listens on `port` and advertises `advertisedPort`, so that a client that came in through the proxy is
   * sent back to the proxy, while clients of `port` (`brokers`) talk to the broker directly. Default: none.
   */
  proxied?: { readonly port: number; readonly advertisedPort: number };
}

/** This node's place in a KRaft cluster. */
export interface KafkaClusterMember {
  /** This node's `node.id`. */
  readonly nodeId: number;
  /**
   * `process.roles`: a combined node (the default), a broker only, or a controller only (Kafka's advice for
   * production: the controller quorum on nodes of its own, so that a broker's death never takes the active
   * controller with it). A controller only has no client listener; `port` is unused.
   */
  readonly roles?: 'broker,controller' | 'broker' | 'controller';
  /** `controller.quorum.voters`: `id@127.0.0.1:controllerPort` of every controller. */
  readonly voters: string;
  /** The cluster id every node is formatted with. */
  readonly clusterId: string;
  /** Replicas of internal topics and the default for created topics. */
  readonly replicationFactor: number;
  /** `min.insync.replicas` of the cluster (and of the internal topics). */
  readonly minInsyncReplicas: number;
}

/** A broker that authenticates with SASL/SCRAM and authorizes with ACLs. */
export interface KafkaBrokerSasl {
  /** SCRAM users made when the storage is formatted (SCRAM-SHA-256 and -512): name → password. */
  readonly users: Readonly<Record<string, string>>;
  /** Principals allowed everything (besides the broker's own `broker` user), e.g. the cluster admin. */
  readonly superUsers: readonly string[];
}

/** The user the broker logs in as to itself (controller and inter-broker listeners): a super user. */
const BROKER_USER = 'broker';

export interface KafkaBrokerStatus {
  port: number;
  pid?: number;
  /** The JVM whose pid we recorded is alive. */
  running: boolean;
  /** A Kafka client got an answer on the port (ours or somebody else's broker). */
  answering: boolean;
  stateDir: string;
  logFile: string;
}

export interface KafkaStartResult {
  /** True when a broker already answered on the port and was reused. */
  reused: boolean;
  /** Wall time of this call, in milliseconds. */
  elapsedMs: number;
}

/**
 * A real Apache Kafka broker run from the jars Maven fetched: formatted once, started in the background
 * with `java -cp`, stopped and started again with its data kept (the outage tests rely on that).
 */
export class KafkaBroker {
  readonly port: number;
  readonly controllerPort: number;
  readonly stateDir: string;
  private readonly heap: string;
  private readonly numPartitions: number;
  private readonly log: (line: string) => void;
  private readonly sasl?: KafkaBrokerSasl;
  private readonly cluster?: KafkaClusterMember;
  private readonly proxied?: { readonly port: number; readonly advertisedPort: number };
  private readonly brokerPassword = randomBytes(12).toString('hex');

  constructor(options: KafkaBrokerOptions = {}) {
    this.port = options.port ?? 9092;
    this.controllerPort = options.controllerPort ?? this.port + 1;
    this.stateDir = options.stateDir ?? path.join(cacheRoot(), 'brokers', String(this.port));
    this.heap = options.heap ?? '768m';
    this.numPartitions = options.numPartitions ?? 3;
    this.log = options.log ?? (() => undefined);
    this.sasl = options.sasl;
    this.cluster = options.cluster;
    this.proxied = options.proxied;
  }

  /** Bootstrap address list for clients. */
  get brokers(): string[] {
    return [`127.0.0.1:${this.port}`];
  }

  get logFile(): string {
    return path.join(this.stateDir, 'kafka.log');
  }

  private get pidFile(): string {
    return path.join(this.stateDir, 'kafka.pid');
  }

  /** `process.roles` of this node. */
  get roles(): 'broker,controller' | 'broker' | 'controller' {
    return this.cluster?.roles ?? 'broker,controller';
  }

  /**
   * Starts the broker unless one already answers on the port; resolves once a client gets answers (a
   * controller only: once its quorum port takes connections).
   */
  async start(timeoutMs = 120_000): Promise<KafkaStartResult> {
    const started = Date.now();
    if (this.roles !== 'controller' && (await this.isAnswering()))
      return { reused: true, elapsedMs: Date.now() - started };

    const pid = await this.recordedPid();
    if (pid === undefined) {
      const libs = await ensureKafkaJars(this.log);
      await this.prepareStorage(libs);
      await this.launch(libs);
    } else {
      this.log(`Kafka on port ${this.port} is starting (pid ${pid}); waiting for it.`);
    }
    await this.waitUntilReady(started + timeoutMs);
    return { reused: false, elapsedMs: Date.now() - started };
  }

  /** Stops our broker gracefully (SIGTERM, then SIGKILL after `graceMs`). Data stays on disk. */
  async stop(graceMs = 30_000): Promise<boolean> {
    const pid = await this.recordedPid();
    if (pid === undefined) return false;
    await stopProcess(pid, this.pidFile, graceMs);
    return true;
  }

  /** Kills the broker without a controlled shutdown, as a crash would. */
  async kill(): Promise<boolean> {
    return this.stop(0);
  }

  /** SIGKILL only, no SIGTERM first: the JVM gets no controlled shutdown (a cluster node's crash). */
  async crash(): Promise<void> {
    const pid = await this.recordedPid();
    if (pid !== undefined) await stopProcess(pid, this.pidFile, 0);
  }

  /** Removes the broker's data, config and log. The broker must be stopped. */
  async destroy(): Promise<void> {
    await this.stop();
    await fs.rm(this.stateDir, { recursive: true, force: true });
  }

  async status(): Promise<KafkaBrokerStatus> {
    const pid = await this.recordedPid();
    return {
      port: this.port,
      pid,
      running: pid !== undefined,
      answering: await this.isAnswering(),
      stateDir: this.stateDir,
      logFile: this.logFile,
    };
  }

  /** True when a Kafka client can talk to a broker on the port. */
  async isAnswering(timeoutMs = 2_000): Promise<boolean> {
    const admin = quietKafka(this.brokers, timeoutMs, 0, this.probeLogin()).admin();
    try {
      await admin.connect();
      await admin.describeCluster();
      return true;
    } catch {
      return false;
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }

  private async prepareStorage(libs: string): Promise<void> {
    const dataDir = path.join(this.stateDir, 'data');
    await fs.mkdir(dataDir, { recursive: true });
    const config = path.join(this.stateDir, 'server.properties');
    await fs.writeFile(config, this.serverProperties(dataDir));
    if (existsSync(path.join(dataDir, 'meta.properties'))) return;
    const clusterId = this.cluster?.clusterId ?? newClusterId();
    try {
      await run('java', [
        '-cp',
        `${libs}/*`,
        'kafka.tools.StorageTool',
        'format',
        '-t',
        clusterId,
        '-c',
        config,
        ...this.scramUsers().flatMap((user) => ['--add-scram', user]),
      ]);
    } catch (error) {
      throw explainToolFailure('java', error, 'Java 17+ runs the Kafka broker');
    }
  }

  private serverProperties(dataDir: string): string {
    const lines = [
      `process.roles=${this.roles}`,
      `node.id=${this.cluster?.nodeId ?? 1}`,
      `controller.quorum.voters=${this.cluster?.voters ?? `1@127.0.0.1:${this.controllerPort}`}`,
      'controller.listener.names=CONTROLLER',
      ...(this.sasl ? this.saslProperties() : this.plaintextProperties()),
      `log.dirs=${dataDir}`,
      `num.partitions=${this.numPartitions}`,
      // A single node: every internal topic has one replica, and consumer groups form without delay.
      'offsets.topic.replication.factor=1',
      'offsets.topic.num.partitions=10',
      'transaction.state.log.replication.factor=1',
      'transaction.state.log.min.isr=1',
      'share.coordinator.state.topic.replication.factor=1',
      'share.coordinator.state.topic.min.isr=1',
      'group.initial.rebalance.delay.ms=0',
      'auto.create.topics.enable=true',
      'delete.topic.enable=true',
      ...(this.cluster ? clusterProperties(this.cluster) : []),
    ];
    return `${lines.join('\n')}\n`;
  }

  private plaintextProperties(): string[] {
    const proxied = this.proxied;
    if (this.roles === 'controller') {
      return [
        `listeners=CONTROLLER://127.0.0.1:${this.controllerPort}`,
        'listener.security.protocol.map=CONTROLLER:PLAINTEXT',
      ];
    }
    if (this.roles === 'broker') {
      return [
        `listeners=PLAINTEXT://127.0.0.1:${this.port}`,
        `advertised.listeners=PLAINTEXT://127.0.0.1:${this.port}`,
        'inter.broker.listener.name=PLAINTEXT',
        'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      ];
    }
    return [
      `listeners=PLAINTEXT://127.0.0.1:${this.port},CONTROLLER://127.0.0.1:${this.controllerPort}` +
        (proxied ? `,PROXIED://127.0.0.1:${proxied.port}` : ''),
      `advertised.listeners=PLAINTEXT://127.0.0.1:${this.port}` +
        (proxied ? `,PROXIED://127.0.0.1:${proxied.advertisedPort}` : ''),
      'inter.broker.listener.name=PLAINTEXT',
      'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT' +
        (proxied ? ',PROXIED:PLAINTEXT' : ''),
    ];
  }

  /**
   * Clients log in with SCRAM on the SASL_PLAINTEXT listener (loopback only, for tests); the broker reaches
   * its controller with PLAIN on the controller listener (SCRAM needs the metadata the controller serves).
   * `StandardAuthorizer` refuses whatever no ACL allows.
   */
  private saslProperties(): string[] {
    if (this.roles !== 'broker,controller') throw new Error('A SASL broker here is a combined node.');
    const sasl = this.sasl as KafkaBrokerSasl;
    const password = this.brokerPassword;
    return [
      `listeners=SASL_PLAINTEXT://127.0.0.1:${this.port},CONTROLLER://127.0.0.1:${this.controllerPort}`,
      `advertised.listeners=SASL_PLAINTEXT://127.0.0.1:${this.port}`,
      'inter.broker.listener.name=SASL_PLAINTEXT',
      'listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT',
      'sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512',
      'sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512',
      // Each enabled mechanism needs a login module; the broker's own credential serves inter-broker calls.
      `listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=${jaas('scram.ScramLoginModule', password)};`,
      `listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=${jaas('scram.ScramLoginModule', password)};`,
      'sasl.mechanism.controller.protocol=PLAIN',
      'listener.name.controller.sasl.enabled.mechanisms=PLAIN',
      `listener.name.controller.plain.sasl.jaas.config=${jaas('plain.PlainLoginModule', password)} user_${BROKER_USER}="${password}";`,
      'authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      `super.users=${[BROKER_USER, ...sasl.superUsers].map((u) => `User:${u}`).join(';')}`,
      'allow.everyone.if.no.acl.found=false',
    ];
  }

  /** `--add-scram` arguments: the broker's own user and every configured one, with both SCRAM mechanisms. */
  private scramUsers(): string[] {
    if (!this.sasl) return [];
    const users = { ...this.sasl.users, [BROKER_USER]: this.brokerPassword };
    return Object.entries(users).flatMap(([name, password]) =>
      ['SCRAM-SHA-256', 'SCRAM-SHA-512'].map((m) => `${m}=[name=${name},password=${password}]`),
    );
  }

  /** How the start probes log in: as the broker's own user when the broker wants SASL. */
  private probeLogin(): SASLOptions | undefined {
    return this.sasl
      ? { mechanism: 'scram-sha-512', username: BROKER_USER, password: this.brokerPassword }
      : undefined;
  }

  private async launch(libs: string): Promise<void> {
    await fs.mkdir(this.stateDir, { recursive: true });
    const spawned = await launchJava(
      { logFile: this.logFile, pidFile: this.pidFile },
      [
        ...jvmOptions(this.heap, this.stateDir),
        '-Djava.awt.headless=true',
        `-Dlog4j2.configurationFile=${LOG4J_CONFIG}`,
        '-cp',
        `${libs}/*`,
        'kafka.Kafka',
        path.join(this.stateDir, 'server.properties'),
      ],
      'Java 17+ runs the Kafka broker',
    );
    this.log(
      `Kafka ${await pinnedKafkaVersion()} starting on 127.0.0.1:${this.port} (pid ${spawned}, log ${this.logFile})`,
    );
  }

  private async waitUntilReady(deadline: number): Promise<void> {
    for (;;) {
      const pid = await this.recordedPid();
      if (pid === undefined) throw new Error(`${this.name} exited while starting.\n${await this.logTail()}`);
      if (this.roles === 'controller' ? await portOpen(this.controllerPort) : await this.ready()) return;
      if (Date.now() > deadline) {
        throw new Error(`${this.name} did not answer in time.\n${await this.logTail()}`);
      }
      await sleep(300);
    }
  }

  /** For messages: the client port, or a controller's quorum port. */
  private get name(): string {
    return this.roles === 'controller'
      ? `Kafka controller on port ${this.controllerPort}`
      : `Kafka on port ${this.port}`;
  }

  private async ready(): Promise<boolean> {
    return (await this.isAnswering()) && (await this.coordinatorReady());
  }

  /**
   * Consumer groups need the group coordinator loaded and idempotent producers the transaction
   * coordinator: describing a group and initialising a producer id wait for both, so that the first
   * client after a start does not meet "coordinator is loading".
   */
  private async coordinatorReady(): Promise<boolean> {
    const kafka = quietKafka(this.brokers, 3_000, 5, this.probeLogin());
    const admin = kafka.admin();
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    try {
      await admin.connect();
      await admin.describeGroups(['__startup-probe']);
      await producer.connect();
      return true;
    } catch {
      return false;
    } finally {
      await admin.disconnect().catch(() => undefined);
      await producer.disconnect().catch(() => undefined);
    }
  }

  private async recordedPid(): Promise<number | undefined> {
    const pid = await recordedPid(this.pidFile);
    if (pid === undefined || !(await isOurBroker(pid, this.stateDir))) {
      await fs.rm(this.pidFile, { force: true });
      return undefined;
    }
    return pid;
  }

  private logTail(): Promise<string> {
    return logTail(this.logFile, 30);
  }
}

/** A cluster id like Kafka's own Uuid.randomUuid(): one starting with '-' would be read as an option of the tool. */
export function newClusterId(): string {
  let clusterId = randomBytes(16).toString('base64url');
  while (clusterId.startsWith('-')) clusterId = randomBytes(16).toString('base64url');
  return clusterId;
}

/** A cluster's replication: later lines of server.properties win, so these override the single-node ones. */
function clusterProperties(cluster: KafkaClusterMember): string[] {
  const rf = cluster.replicationFactor;
  const isr = cluster.minInsyncReplicas;
  return [
    `default.replication.factor=${rf}`,
    `min.insync.replicas=${isr}`,
    `offsets.topic.replication.factor=${rf}`,
    `transaction.state.log.replication.factor=${rf}`,
    `transaction.state.log.min.isr=${isr}`,
    `share.coordinator.state.topic.replication.factor=${rf}`,
    `share.coordinator.state.topic.min.isr=${isr}`,
    // A restarted node takes its partitions' leadership back soon, as in production.
    'leader.imbalance.check.interval.seconds=10',
    // Failover in seconds (issue 32; docs/guide/07-clusters.md): the controller fences a node whose broker
    // heartbeats stopped for broker.session.timeout.ms (default 9 s), and only then elects new leaders and
    // drops the node from every ISR (until then acks=all writes to the partitions it followed wait too).
    // A live node is fenced only by a pause longer than the session less the heartbeat interval: 1.25 s here,
    // 1.5 s with the 2,000 / 500 ms of before (the brokers' share of a failover then 1.7–2.3 s, now 1.4–1.7 s:
    // bench/README.md "Failover on a cluster").
    'broker.heartbeat.interval.ms=250',
    'broker.session.timeout.ms=1500',
    // When the dead node led the controller quorum: the others notice after the fetch timeout (default 2 s)
    // and elect within the election timeout (default 1 s).
    'controller.quorum.fetch.timeout.ms=1000',
    'controller.quorum.election.timeout.ms=500',
  ];
}

function quietKafka(brokers: string[], timeoutMs: number, retries = 0, sasl?: SASLOptions): Kafka {
  patchKafkajsRequestQueue();
  return new Kafka({
    clientId: 'kafka-broker-probe',
    brokers,
    sasl,
    connectionTimeout: timeoutMs,
    requestTimeout: timeoutMs,
    retry: { retries, initialRetryTime: 100, maxRetryTime: 1_000 },
    logLevel: logLevel.NOTHING,
  });
}

function jaas(module: string, password: string): string {
  return `org.apache.kafka.common.security.${module} required username="${BROKER_USER}" password="${password}"`;
}

/** Guards against a recycled pid: the process must be a Kafka JVM started with our config. */
async function isOurBroker(pid: number, stateDir: string): Promise<boolean> {
  const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
  if (cmdline === undefined) return true; // no procfs: trust the pid file
  return cmdline.includes('kafka.Kafka') && cmdline.includes(stateDir);
}

/**
 * The JVM options of Kafka's own start script (`kafka-run-class.sh`'s `KAFKA_JVM_PERFORMANCE_OPTS` and GC log,
 * `kafka-server-start.sh`'s fixed heap), so that the broker pauses as a production one does: G1 aiming at
 * 20 ms pauses (the JVM's default aims at 200 ms, and young collections here took 10–27 ms on average, long
 * enough to show in a 200/s window's p99), no heap resizing, and every pause in `<dir>/gc.log`.
 */
export function jvmOptions(heap: string, stateDir: string): string[] {
  return [
    `-Xms${heap}`,
    `-Xmx${heap}`,
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    '-XX:InitiatingHeapOccupancyPercent=35',
    '-XX:+ExplicitGCInvokesConcurrent',
    `-Xlog:gc:file=${path.join(stateDir, 'gc.log')}:time,uptime,level,tags:filecount=2,filesize=10m`,
  ];
}
