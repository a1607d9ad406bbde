import * as path from 'node:path';
import { freePort } from '../infra/ports';
import { BlogClient } from './blog-client';
import { applyBlogTopology, BLOG_SERVICE_ENV } from './blog-topology';
import { BuiltServices } from './build-services';
import { ServiceProcess } from './service-process';

/** Where one service keeps its tables. */
export interface ServiceDatabase {
  readonly url: string;
  /** A schema of its own inside that database (tests); default `public`. */
  readonly schema?: string;
}

/** How to run the two services together. */
export interface BlogStackOptions {
  readonly transport: 'kafka' | 'rabbitmq';
  readonly kafkaBrokers: readonly string[];
  readonly amqpUrl: string;
  /** The RabbitMQ URL `messaging topology apply` runs with (an admin user). Default: `amqpUrl`. */
  readonly topologyAmqpUrl?: string;
  readonly databases: { readonly post: ServiceDatabase; readonly subscribe: ServiceDatabase };
  readonly build: BuiltServices;
  /** Each service's log goes to `<logDir>/<service>.log`. */
  readonly logDir: string;
  /** A cluster (issue 19): RF 3 topics, or quorum queues (`AMQP_QUEUE_TYPE=quorum`). Default false. */
  readonly cluster?: boolean;
  /** More environment for both services (e.g. `RELAY_LEASE_MS`). */
  readonly env?: Record<string, string>;
  /** post-service's relay: `poll` (default) or `logical` (its database's slot must exist). */
  readonly relayMode?: 'poll' | 'logical';
}

/** The consumer group subscribe-service's handler declares. */
export const SUBSCRIBE_GROUP = 'subscribe-service';

/** post-service and subscribe-service as processes on free ports, and a client for both. */
export class BlogStack {
  private constructor(
    readonly post: ServiceProcess,
    readonly subscribe: ServiceProcess,
    readonly client: BlogClient,
  ) {}

  /**
   * Applies the topology as the local admin (`messaging topology apply`), starts subscribe-service and waits
   * until its consumer is subscribed, then post-service.
   */
  static async start(options: BlogStackOptions): Promise<BlogStack> {
    await applyBlogTopology({ ...options, amqpUrl: options.topologyAmqpUrl ?? options.amqpUrl });
    const common = {
      ...BLOG_SERVICE_ENV,
      MESSAGING_TRANSPORT: options.transport,
      KAFKA_BROKERS: options.kafkaBrokers.join(','),
      AMQP_URL: options.amqpUrl,
      HOST: '127.0.0.1',
      ...(options.cluster && options.transport === 'rabbitmq' ? { AMQP_QUEUE_TYPE: 'quorum' } : {}),
      ...options.env,
    };
    const process = async (service: 'post-service' | 'subscribe-service', database: ServiceDatabase) => {
      const port = await freePort();
      const relay = service === 'post-service' && options.relayMode ? { RELAY_MODE: options.relayMode } : {};
      return new ServiceProcess({
        name: service,
        entry: options.build.entry(service),
        port,
        logFile: path.join(options.logDir, `${service}.log`),
        env: {
          ...common,
          ...relay,
          PORT: String(port),
          DATABASE_URL: database.url,
          DATABASE_SCHEMA: database.schema,
        },
        ready:
          service === 'subscribe-service'
            ? (health) => health.consumers.includes(SUBSCRIBE_GROUP)
            : undefined,
      });
    };
    const subscribe = await process('subscribe-service', options.databases.subscribe);
    const post = await process('post-service', options.databases.post);
    await subscribe.start();
    try {
      await post.start();
    } catch (error) {
      await subscribe.stop();
      throw error;
    }
    return new BlogStack(post, subscribe, new BlogClient(post.url, subscribe.url));
  }

  /** Stops both gracefully. */
  async stop(): Promise<void> {
    await Promise.all([this.post.stop(), this.subscribe.stop()]);
  }
}
