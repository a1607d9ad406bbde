import * as path from 'node:path';
import { BlogClient } from '../../../tools/demo/blog-client';
import { SUBSCRIBE_GROUP } from '../../../tools/demo/blog-stack';
import { applyBlogTopology, BLOG_SERVICE_ENV } from '../../../tools/demo/blog-topology';
import { BuiltServices, ServiceName } from '../../../tools/demo/build-services';
import { ServiceProcess } from '../../../tools/demo/service-process';
import { freePort } from '../../../tools/infra/ports';
import { kafkaBrokerControl, rabbitNodeControl } from '../../../tools/demo/broker-control';
import { createReplicationSlot, logicalNames, SqlRunner } from 'nest-reliable-messaging/testing';
import { FaultProxy } from '../../harness/fault-proxy';
import { infraEnv } from '../../harness/infra';
import { LOGICAL_DECODING_SETTINGS } from '../../harness/postgres-cluster';
import { PrivateDatabaseServer, startPrivateDatabaseServer } from '../../harness/private-database-server';
import { proxyUrl, startProxiedKafka } from '../../harness/proxied';
import { startPrivateRabbitNode } from '../../harness/rabbitmq-node';
import { TestDialect } from '../../harness/test-database';
import { PrivateBroker, startPrivateBrokerFor } from '../../e2e/support/private-broker';

export type Transport = 'kafka' | 'rabbitmq';

/** The post-services' relay: the outbox table (`poll`) or PostgreSQL's log (`logical`, issue 30). */
export type RunRelay = 'poll' | 'logical';

/**
 * With the logical relay, a second slot on post-service's database, made with the relay's: it keeps every
 * message post-service committed, for the checks (the log is the outbox then; there are no rows).
 */
export const AUDIT_SLOT = 'fault_run_audit';

/**
 * Environment of every service of a fault run: a killed relay's claims expire after 5 s (default 30 s), a
 * vanished consumer group member after 10 s (default 30 s).
 */
export const FAULT_RUN_ENV = { RELAY_LEASE_MS: '5000', KAFKA_SESSION_TIMEOUT_MS: '10000' } as const;

/** Options of one service process on the run's infrastructure. */
export interface ServiceSpec {
  readonly service: ServiceName;
  /** For messages and the log file name: `post-service-b`. */
  readonly name: string;
  readonly databaseUrl: string;
  readonly schema?: string;
  readonly transport: Transport;
  readonly kafkaBrokers: readonly string[];
  readonly amqpUrl: string;
  readonly build: BuiltServices;
  readonly logDir: string;
  readonly env?: Record<string, string | undefined>;
  /** Wait until its consumer group runs (subscribe-service; default true for it). */
  readonly waitForConsumer?: boolean;
}

/** A demo service as a process on a free port (the demo's `ServiceProcess`), configured for `spec`. */
export async function serviceProcess(spec: ServiceSpec): Promise<ServiceProcess> {
  const port = await freePort();
  const waitForConsumer = spec.waitForConsumer ?? spec.service === 'subscribe-service';
  return new ServiceProcess({
    name: spec.name,
    entry: spec.build.entry(spec.service),
    port,
    logFile: path.join(spec.logDir, `${spec.name}.log`),
    env: {
      ...BLOG_SERVICE_ENV,
      MESSAGING_TRANSPORT: spec.transport,
      KAFKA_BROKERS: spec.kafkaBrokers.join(','),
      AMQP_URL: spec.amqpUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: spec.databaseUrl,
      DATABASE_SCHEMA: spec.schema,
      ...spec.env,
    },
    ready: waitForConsumer ? (health) => health.consumers.includes(SUBSCRIBE_GROUP) : undefined,
  });
}

/**
 * The fault proxies of a chaos run, one per link of the services: to the broker (every service), to
 * post-service's database (both instances) and to subscribe-service's.
 */
export interface StackLinks {
  readonly broker: FaultProxy;
  readonly postDatabase: FaultProxy;
  readonly subscribeDatabase: FaultProxy;
}

/** A private broker whose services' link goes through a fault proxy (`broker` stays direct, for witnesses). */
async function startProxiedBroker(transport: Transport): Promise<{
  broker: PrivateBroker;
  proxy: FaultProxy;
  service: { kafkaBrokers: string[]; amqpUrl: string };
}> {
  if (transport === 'kafka') {
    const kafka = await startProxiedKafka();
    return {
      broker: {
        kafkaBrokers: kafka.directBrokers,
        amqpUrl: infraEnv().amqpUrl,
        outage: kafkaBrokerControl(kafka.broker),
        destroy: () => kafka.destroy(),
      },
      proxy: kafka.proxy,
      service: { kafkaBrokers: kafka.brokers, amqpUrl: infraEnv().amqpUrl },
    };
  }
  const node = await startPrivateRabbitNode();
  const link = await proxyUrl(node.url, 'amqp', 'RabbitMQ').catch(async (error: unknown) => {
    await node.destroy();
    throw error;
  });
  return {
    broker: {
      kafkaBrokers: infraEnv().kafkaBrokers,
      amqpUrl: node.url,
      outage: rabbitNodeControl(node),
      destroy: async () => {
        await link.proxy.close();
        await node.destroy();
      },
    },
    proxy: link.proxy,
    service: { kafkaBrokers: infraEnv().kafkaBrokers, amqpUrl: link.url },
  };
}

/**
 * Everything a fault run injects faults into, all of the suite's own: a PostgreSQL cluster or MariaDB server
 * (post-service's and subscribe-service's databases), a Kafka broker or RabbitMQ node, subscribe-service, and two
 * post-service instances on one database (two relays on one outbox).
 */
export class FaultStack {
  private constructor(
    readonly transport: Transport,
    readonly database: PrivateDatabaseServer,
    readonly broker: PrivateBroker,
    readonly postDatabaseUrl: string,
    readonly subscribeDatabaseUrl: string,
    readonly subscribe: ServiceProcess,
    readonly posts: readonly ServiceProcess[],
    /** The services' links through fault proxies (chaos mode), or undefined. */
    readonly links: StackLinks | undefined,
    readonly relay: RunRelay,
  ) {}

  /** Starts the stack; with `proxied` (chaos mode) the services reach the broker and databases through proxies. */
  static async start(
    transport: Transport,
    dialect: TestDialect,
    build: BuiltServices,
    logDir: string,
    options: { readonly proxied?: boolean; readonly relay?: RunRelay } = {},
  ): Promise<FaultStack> {
    const cleanups: Array<() => Promise<unknown>> = [];
    const { proxied = false, relay = 'poll' } = options;
    try {
      const logical = relay === 'logical';
      // The database server and the broker boot side by side (initdb or MariaDB's install and a JVM or Erlang
      // VM: each mostly waits on its own start-up); whichever started is released if the other fails.
      const databaseBooting = startPrivateDatabaseServer(
        dialect,
        `faults-${transport}`,
        logical ? { settings: LOGICAL_DECODING_SETTINGS } : undefined,
      );
      const brokerBooting = proxied
        ? startProxiedBroker(transport)
        : startPrivateBrokerFor(transport).then((broker) => ({ broker, service: broker, proxy: undefined }));
      const [databaseStart, brokerStart] = await Promise.allSettled([databaseBooting, brokerBooting]);
      if (databaseStart.status === 'fulfilled') cleanups.push(() => databaseStart.value.destroy());
      if (brokerStart.status === 'fulfilled') {
        const started = brokerStart.value;
        cleanups.push(() => started.broker.destroy()); // (a proxied broker's destroy closes its proxy)
      }
      if (databaseStart.status === 'rejected') throw databaseStart.reason;
      if (brokerStart.status === 'rejected') throw brokerStart.reason;
      const database = databaseStart.value;
      const { broker, service, proxy: brokerProxy } = brokerStart.value;
      let [postDatabaseUrl, subscribeDatabaseUrl] = await Promise.all([
        database.createDatabase('post_service'),
        database.createDatabase('subscribe_service'),
      ]);
      let links: StackLinks | undefined;
      if (logical) await createLogicalSlots(database);
      if (proxied) {
        const protocol = dialect === 'postgres' ? 'postgres' : 'mysql';
        const [post, subscribe] = [
          await proxyUrl(postDatabaseUrl, protocol, 'post-service database'),
          await proxyUrl(subscribeDatabaseUrl, protocol, 'subscribe-service database'),
        ];
        cleanups.push(
          () => post.proxy.close(),
          () => subscribe.proxy.close(),
        );
        [postDatabaseUrl, subscribeDatabaseUrl] = [post.url, subscribe.url];
        links = {
          broker: brokerProxy as FaultProxy,
          postDatabase: post.proxy,
          subscribeDatabase: subscribe.proxy,
        };
      }
      await applyBlogTopology({ transport, kafkaBrokers: broker.kafkaBrokers, amqpUrl: broker.amqpUrl });
      const common = {
        transport,
        kafkaBrokers: service.kafkaBrokers,
        amqpUrl: service.amqpUrl,
        build,
        logDir,
        env: FAULT_RUN_ENV,
      };
      const postEnv = { ...FAULT_RUN_ENV, ...(logical ? { RELAY_MODE: 'logical' } : {}) };
      const subscribe = await serviceProcess({
        ...common,
        service: 'subscribe-service',
        name: 'subscribe-service',
        databaseUrl: subscribeDatabaseUrl,
      });
      const posts = await Promise.all(
        ['a', 'b'].map((suffix) =>
          serviceProcess({
            ...common,
            service: 'post-service',
            name: `post-service-${suffix}`,
            databaseUrl: postDatabaseUrl,
            env: postEnv,
          }),
        ),
      );
      // subscribe-service first (on RabbitMQ its queue is then bound); the post-services one after the other,
      // so that only the first runs the migrations.
      for (const service of [subscribe, ...posts]) {
        cleanups.push(() => service.kill());
        await service.start();
      }
      return new FaultStack(
        transport,
        database,
        broker,
        postDatabaseUrl,
        subscribeDatabaseUrl,
        subscribe,
        posts,
        links,
        relay,
      );
    } catch (error) {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
      throw error;
    }
  }

  /** post-service's database as a statement runner (its slots, the audit slot). */
  postSql(): SqlRunner {
    return <R extends object>(sql: string, params?: unknown[]) =>
      this.database.query<R>(sql, params, 'post_service');
  }

  /** Every process of the stack. */
  get services(): ServiceProcess[] {
    return [this.subscribe, ...this.posts];
  }

  /** A client that posts through `post` and reads subscribe-service. */
  client(post: ServiceProcess = this.posts[0]): BlogClient {
    return new BlogClient(post.url, this.subscribe.url);
  }

  /** Kills every process (SIGKILL, by pid), stops the broker and the database server and removes their data. */
  async destroy(): Promise<void> {
    await Promise.all(this.services.map((s) => s.kill()));
    await this.links?.postDatabase.close();
    await this.links?.subscribeDatabase.close();
    // The broker's graceful stop and the database server's, side by side.
    await Promise.all([this.broker.destroy().catch(() => undefined), this.database.destroy()]);
  }
}

/**
 * post-service's slot (its relay reads it; the default schema's name) and the audit slot, made before any
 * service writes: `nest-messaging relay slot create` as an operator would run it.
 */
async function createLogicalSlots(database: PrivateDatabaseServer): Promise<void> {
  const sql: SqlRunner = <R extends object>(text: string, params?: unknown[]) =>
    database.query<R>(text, params, 'post_service');
  const names = logicalNames(undefined);
  await createReplicationSlot(sql, names);
  await sql(`select pg_create_logical_replication_slot($1, 'pgoutput')`, [AUDIT_SLOT]);
}
