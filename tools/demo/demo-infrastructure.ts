import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { infraEnv, localKafkaPort } from '../infra/env';
import { KafkaBroker } from '../infra/kafka-broker';
import { KafkaCluster } from '../infra/kafka-cluster';
import { freePort } from '../infra/ports';
import { RabbitCluster } from '../infra/rabbitmq-cluster';
import { RabbitMqNode } from '../infra/rabbitmq-node';
import { checkRabbit } from '../infra/services';
import { BLOG_TOPOLOGY } from './blog-topology';
import {
  BrokerControl,
  kafkaBrokerControl,
  kafkaClusterNodeControl,
  rabbitClusterNodeControl,
  rabbitNodeControl,
} from './broker-control';
import { DatabaseServer, mariadbServer, postgresServer } from './databases';
import { DemoOptions } from './demo-options';

const run = promisify(execFile);

/** What the demo runs against. */
export interface DemoInfrastructure {
  /** The PostgreSQL or MariaDB server the services keep their tables on. */
  readonly database: DatabaseServer;
  readonly kafkaBrokers: string[];
  readonly amqpUrl: string;
  /** The RabbitMQ URL `messaging topology apply` runs with. Default: `amqpUrl`. */
  readonly topologyAmqpUrl?: string;
  /** The broker the outage scenario stops and starts. */
  readonly outage: BrokerControl;
}

/** Work to undo at the end, latest first. */
export type RegisterCleanup = (description: string, undo: () => Promise<unknown>) => void;

/** The demo cannot run here; the message lists everything missing and how to get it. */
export class MissingInfrastructureError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`The demo cannot run yet:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'MissingInfrastructureError';
  }
}

/**
 * Brings up what the demo needs and is missing: PostgreSQL or MariaDB is used as found; Kafka is started through the
 * project's scripts (and stopped at the end if the demo started it); RabbitMQ is used as found, and
 * `rabbitmqctl` must be able to stop and start its application. With `--isolated`, a private broker or
 * node of the demo's own is started instead, and removed at the end; with `--cluster`, a three-node cluster.
 */
export async function prepareInfrastructure(
  options: DemoOptions,
  log: (line: string) => void,
  cleanup: RegisterCleanup,
): Promise<DemoInfrastructure> {
  const env = infraEnv();
  const problems: string[] = [];
  const database =
    options.database === 'mariadb' ? mariadbServer(env.mariadbUrl) : postgresServer(env.databaseUrl);
  await database.check().catch((error: Error) => problems.push(error.message));

  const ownBrokers = options.isolated || options.cluster;
  if (options.transport === 'rabbitmq' && !ownBrokers) {
    await checkRabbit(env.amqpUrl).catch((error: Error) => problems.push(error.message));
    if (!isLocal(env.amqpUrl)) {
      problems.push(
        `AMQP_URL points at ${new URL(env.amqpUrl).host}: the outage scenario stops and starts the local node ` +
          'with rabbitmqctl. Unset AMQP_URL, or use --isolated.',
      );
    } else if (problems.length === 0) {
      await RabbitMqNode.local(env.amqpUrl)
        .ping()
        .catch((error: Error) =>
          problems.push(
            `rabbitmqctl cannot control the local node (${error.message.split('\n')[0]}); the outage scenario ` +
              'needs it: run the demo as root or as the rabbitmq user, or use --isolated.',
          ),
        );
    }
  }
  if (options.transport === 'kafka' && !ownBrokers && !env.localKafka) {
    problems.push(
      `KAFKA_BROKERS=${env.kafkaBrokers.join(',')} is set: the outage scenario stops and starts the broker, ` +
        'which the demo can only do with the local broker it runs itself. Unset KAFKA_BROKERS, or use --isolated.',
    );
  }
  if (options.transport === 'kafka' && !ownBrokers && env.localKafka) {
    const status = await new KafkaBroker({ port: localKafkaPort(env) }).status();
    if (status.answering && !status.running) {
      problems.push(
        `A Kafka broker answers on 127.0.0.1:${status.port}, but this project did not start it, so the demo ` +
          'cannot stop it for the outage. Stop it (the demo then starts its own), or use --isolated.',
      );
    }
  }
  if (problems.length > 0) throw new MissingInfrastructureError([...problems, ...(await dockerHint())]);
  if (options.cluster) return startCluster(options, database, log, cleanup);

  if (options.transport === 'kafka') {
    const broker = options.isolated
      ? new KafkaBroker({
          port: await freePort(),
          controllerPort: await freePort(),
          stateDir: mkdtempSync(path.join(os.tmpdir(), 'kafka-demo-')),
          heap: '512m',
          log,
        })
      : new KafkaBroker({ port: localKafkaPort(env), log });
    const started = await broker.start();
    if (options.isolated)
      cleanup(`remove the demo's Kafka broker on ${broker.brokers[0]}`, () => broker.destroy());
    else if (!started.reused)
      cleanup(`stop Kafka on ${broker.brokers[0]} (the demo started it)`, () => broker.stop());
    log(
      started.reused
        ? `Kafka answers on ${broker.brokers[0]}.`
        : `Kafka started on ${broker.brokers[0]} in ${(started.elapsedMs / 1000).toFixed(1)} s.`,
    );
    return {
      database,
      kafkaBrokers: broker.brokers,
      amqpUrl: env.amqpUrl,
      outage: kafkaBrokerControl(broker),
    };
  }

  const node = options.isolated ? await RabbitMqNode.startPrivate('demo') : RabbitMqNode.local(env.amqpUrl);
  if (options.isolated) cleanup(`remove the demo's RabbitMQ node ${node.nodeName}`, () => node.destroy());
  log(
    `RabbitMQ answers on ${node.url.replace(/\/\/[^@]*@/, '//')}${node.nodeName ? ` (node ${node.nodeName})` : ''}.`,
  );
  return {
    database,
    kafkaBrokers: env.kafkaBrokers,
    amqpUrl: node.url,
    outage: rabbitNodeControl(node),
  };
}

/** `--cluster`: three Kafka brokers (RF 3, `min.insync.replicas` 2) or three RabbitMQ nodes of the demo's own. */
async function startCluster(
  options: DemoOptions,
  database: DatabaseServer,
  log: (line: string) => void,
  cleanup: RegisterCleanup,
): Promise<DemoInfrastructure> {
  const started = Date.now();
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  if (options.transport === 'kafka') {
    log(
      'Starting a Kafka cluster: three brokers (replication factor 3, min.insync.replicas 2) and three controllers...',
    );
    // The controller quorum on nodes of its own, as Kafka advises for production (docs/guide/07-clusters.md):
    // the outage stops a broker, never the active controller with it.
    const cluster = await KafkaCluster.start(3, { controllers: 3 });
    cleanup(`remove the demo's Kafka cluster on ${cluster.brokers.join(',')}`, () => cluster.destroy());
    log(`Kafka cluster started on ${cluster.brokers.join(',')} in ${elapsed()}.`);
    return {
      database,
      kafkaBrokers: cluster.brokers,
      amqpUrl: infraEnv().amqpUrl,
      outage: kafkaClusterNodeControl(cluster),
    };
  }
  log('Starting a three-node RabbitMQ cluster (quorum queues)...');
  const cluster = await RabbitCluster.start();
  cleanup(`remove the demo's RabbitMQ cluster (${cluster.nodes.length} nodes)`, () => cluster.destroy());
  const [servicesNode, declaringNode] = cluster.nodes;
  const [group] = BLOG_TOPOLOGY.groups; // its work queue: <destination>.<group>
  log(
    `RabbitMQ cluster started in ${elapsed()}: ${cluster.nodes.map((n) => n.nodeName).join(', ')}; ` +
      `the services connect to ${servicesNode.nodeName}.`,
  );
  return {
    database,
    kafkaBrokers: infraEnv().kafkaBrokers,
    amqpUrl: servicesNode.url,
    topologyAmqpUrl: declaringNode.url,
    outage: rabbitClusterNodeControl(cluster, servicesNode, `${group.destination}.${group.group}`),
  };
}

function isLocal(url: string): boolean {
  return ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname);
}

/** Where a Docker engine answers, the compose file is another way to get the services. */
async function dockerHint(): Promise<string[]> {
  try {
    await run('docker', ['info', '--format', '{{.ServerVersion}}'], { timeout: 5_000 });
  } catch {
    return [];
  }
  return [
    'A Docker engine answers here: `docker compose -f docker/compose.yml up -d postgres` provides PostgreSQL ' +
      '(then DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres). The brokers stay local: the ' +
      'outage scenario stops and starts them (`docker compose ... up` runs the whole stack without the demo).',
  ];
}
