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
      // One at a time: Erlang boots are CPU-heavy, and a 2-core machine gains nothing from starting three.
      for (let i = 0; i < size; i++) nodes.push(await RabbitMqNode.startPrivate(`cluster${i}`, { cookie }));
      for (const node of nodes.slice(1)) await node.joinCluster(nodes[0]);
    } catch (error) {
      await Promise.all(nodes.map((n) => n.destroy().catch(() => undefined)));
      throw error;
    }
    return new RabbitCluster(nodes);
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
