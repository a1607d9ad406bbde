import { BlogClient } from '../../../tools/demo/blog-client';
import { applyBlogTopology } from '../../../tools/demo/blog-topology';
import { ServiceProcess } from '../../../tools/demo/service-process';
import { e2eBuild } from '../../e2e/support/e2e-build';
import { FaultStack, FAULT_RUN_ENV, serviceProcess } from '../../faults/support/fault-stack';
import { POST_DATABASE } from '../../faults/support/fault-facts';
import { createTestSchema, TestSchema } from '../../harness/postgres';

/** Where the stack's services reach the cluster. */
export interface ClusterAccess {
  readonly transport: 'kafka' | 'rabbitmq';
  /** Every broker of the Kafka cluster (unused on RabbitMQ). */
  readonly kafkaBrokers: readonly string[];
  /** The node the services connect to (RabbitMQ). */
  readonly amqpUrl: string;
  /** The node the admin declares the topology through: quorum queues get their first leader there. */
  readonly adminAmqpUrl: string;
}

/**
 * post-service and subscribe-service as processes on a cluster, their tables in two schemas of the shared
 * PostgreSQL server. The topology is applied as production would: Kafka topics with replication factor 3
 * and `min.insync.replicas` 2 (the cluster's), RabbitMQ quorum queues, which the services (in `verify`
 * mode, with `AMQP_QUEUE_TYPE=quorum`) check at startup.
 */
export class ClusterStack {
  private constructor(
    readonly post: ServiceProcess,
    readonly subscribe: ServiceProcess,
    private readonly schemas: { post: TestSchema; subscribe: TestSchema },
  ) {}

  static async start(access: ClusterAccess, logDir: string): Promise<ClusterStack> {
    const [post, subscribe] = await Promise.all([
      createTestSchema('cluster_post'),
      createTestSchema('cluster_subscribe'),
    ]);
    const started: ServiceProcess[] = [];
    try {
      // As the admin, through the admin's node: RF 3 topics, quorum queues.
      await applyBlogTopology({ ...access, amqpUrl: access.adminAmqpUrl, cluster: true });
      const common = {
        transport: access.transport,
        kafkaBrokers: access.kafkaBrokers,
        amqpUrl: access.amqpUrl,
        build: e2eBuild(),
        logDir,
      };
      // kafkajs's own account of the failover (INFO: rejoins, metadata refreshes) in the service logs.
      const env = { ...FAULT_RUN_ENV, AMQP_QUEUE_TYPE: 'quorum', KAFKAJS_LOG_LEVEL: 'info' };
      const services = [
        serviceProcess({
          ...common,
          service: 'subscribe-service',
          name: 'subscribe-service',
          databaseUrl: subscribe.databaseUrl,
          schema: subscribe.name,
          env,
        }),
        serviceProcess({
          ...common,
          service: 'post-service',
          name: 'post-service',
          databaseUrl: post.databaseUrl,
          schema: post.name,
          env,
        }),
      ];
      for (const service of await Promise.all(services)) {
        started.push(service);
        await service.start(180_000);
      }
      return new ClusterStack(started[1], started[0], { post, subscribe });
    } catch (error) {
      await Promise.all(started.map((s) => s.kill()));
      await Promise.all([post.drop(), subscribe.drop()]);
      throw error;
    }
  }

  client(): BlogClient {
    return new BlogClient(this.post.url, this.subscribe.url);
  }

  /**
   * The stack's two schemas seen as the fault suite's database server (`readDatabaseFacts` and friends
   * query `post_service` and `subscribe_service`).
   */
  get database(): FaultStack['database'] {
    const { post, subscribe } = this.schemas;
    const query = <R extends object>(sql: string, params?: unknown[], database?: string) =>
      (database === POST_DATABASE ? post : subscribe).query<R>(sql, params);
    return { dialect: 'postgres', label: 'PostgreSQL', query } as unknown as FaultStack['database'];
  }

  async stop(): Promise<void> {
    await Promise.all([this.post.kill(), this.subscribe.kill()]);
    await Promise.all([this.schemas.post.drop(), this.schemas.subscribe.drop()]);
  }
}
