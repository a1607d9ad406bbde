import { randomBytes } from 'node:crypto';
import * as amqp from 'amqplib';
import { RabbitMqNode } from './rabbitmq-node';

/**
 * Issue 19: three private RabbitMQ nodes joined into one cluster on this machine, each on its own ports,
 * node name and data folder, sharing one Erlang cookie (`rabbitmqctl join_cluster`). A suite kills,
 * restarts and suspends its nodes (the demo's `--cluster` stops one); the shared node on 5672 is never
 * touched.
 */
export class RabbitCluster {
  private constructor(readonly nodes: readonly RabbitMqNode[]) {}

  static async start(size = 3): Promise<RabbitCluster> {
    const cookie = randomBytes(16).toString('hex').toUpperCase();
    const nodes: RabbitMqNode[] = [];
    try {
      // The first node, then the others side by side, each joining it as it boots (peer discovery from its
      // configuration: no stop_app, reset, join_cluster and second start per node, each a `rabbitmqctl` VM).
      const seed = await RabbitMqNode.startPrivate('cluster0', { cookie });
      nodes.push(seed);
      const joining = await Promise.allSettled(
        Array.from({ length: size - 1 }, (_, i) =>
          RabbitMqNode.startPrivate(`cluster${i + 1}`, { cookie, seed: seed.nodeName }),
        ),
      );
      for (const result of joining) if (result.status === 'fulfilled') nodes.push(result.value);
      const failed = joining.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
      // A node that found no peer in time boots alone (its boot ends after the join): every node must be in.
      const running = await RabbitCluster.runningNodes(seed);
      const missing = nodes.filter((node) => !running.includes(node.nodeName as string));
      if (missing.length > 0) {
        throw new Error(
          `RabbitMQ nodes ${missing.map((n) => n.nodeName).join(', ')} did not join ${seed.nodeName}'s cluster.`,
        );
      }
    } catch (error) {
      await Promise.all(nodes.map((n) => n.destroy().catch(() => undefined)));
      throw error;
    }
    return new RabbitCluster(nodes);
  }

  /** The running members of `asker`'s cluster, by node name. */
  private static async runningNodes(asker: RabbitMqNode): Promise<string[]> {
    const status = JSON.parse(await asker.rabbitmqctl(['cluster_status', '--formatter', 'json'])) as {
      running_nodes?: string[];
    };
    return status.running_nodes ?? [];
  }

  /** The node holding the leader of quorum queue `queue` (vhost `/`). */
  async leaderOf(queue: string): Promise<RabbitMqNode> {
    for (const asker of this.nodes) {
      const out = await asker
        .rabbitmqctl(['list_queues', 'name', 'leader', '--no-table-headers'])
        .catch(() => '');
      const line = out.split('\n').find((l) => l.split('\t')[0] === queue);
      const leader = line?.split('\t')[1]?.trim();
      const node = this.nodes.find((n) => n.nodeName === leader);
      if (node) return node;
    }
    throw new Error(`No node of the cluster names a leader for quorum queue '${queue}'.`);
  }

  /** Members of the quorum queue `queue` that are in sync, as the given node sees it (`online` members). */
  async onlineMembers(queue: string, asker: RabbitMqNode): Promise<string[]> {
    const out = await asker.rabbitmqctl(['list_queues', 'name', 'online', '--no-table-headers']);
    const line = out.split('\n').find((l) => l.split('\t')[0] === queue);
    return (line?.split('\t')[1] ?? '').match(/[\w.-]+@[\w.-]+/g) ?? [];
  }

  /** Waits until `url`'s node accepts an AMQP connection. */
  static async reachable(url: string): Promise<void> {
    const connection = await amqp.connect(url);
    await connection.close();
  }

  /**
   * Kills every node and removes its data: the cluster is thrown away, and a graceful stop of its nodes
   * side by side waited for each other (a test run spent 30 s or more in it).
   */
  async destroy(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.discard().catch(() => undefined)));
  }
}
