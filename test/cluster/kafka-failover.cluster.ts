import { SUBSCRIBE_GROUP } from '../../tools/demo/blog-stack';
import { KafkaCluster } from '../harness/kafka-cluster';
import { failoverSuite } from './support/failover-suite';
import { KafkaElectionWatch } from './support/kafka-election-watch';

/**
 * Which node dies: the leader of post-create[0] (the default), or with `CLUSTER_KILL=coordinator` the node
 * coordinating subscribe-service's consumer group (as FindCoordinator answers), the case where kafkajs keeps
 * talking to a dead coordinator.
 */
const KILL = process.env.CLUSTER_KILL === 'coordinator' ? 'coordinator' : 'leader';

/**
 * The controller quorum: on three nodes of its own beside the three brokers (the default, Kafka's advice for
 * production), or with `CLUSTER_CONTROLLERS=combined` on the brokers themselves, where the broker killed is
 * often also the active controller and the brokers' share of the failover grows by a quorum election
 * (docs/guide/07-clusters.md).
 */
const CONTROLLERS = process.env.CLUSTER_CONTROLLERS === 'combined' ? 0 : 3;

// RF 3, min.insync.replicas 2: a broker is SIGKILLed under load and restarted.
failoverSuite('Kafka', async () => {
  const cluster = await KafkaCluster.start(3, { controllers: CONTROLLERS });
  return {
    access: { transport: 'kafka', kafkaBrokers: cluster.brokers, amqpUrl: '', adminAmqpUrl: '' },
    fault: async () => {
      const node =
        KILL === 'coordinator'
          ? await cluster.coordinatorOf(SUBSCRIBE_GROUP)
          : await cluster.leaderOf('post-create', 0);
      // The partition of post-create whose new leader the watch waits for: one the node leads.
      const led = await cluster.partitionsLedBy('post-create', cluster.nodeIdOf(node));
      const partition = KILL === 'leader' ? 0 : (led.sort()[0] ?? 0);
      const controller =
        CONTROLLERS > 0
          ? ' (the controller quorum on nodes of its own)'
          : (await cluster.activeController()) === cluster.nodeIdOf(node)
            ? ', the active controller'
            : '';
      return {
        label:
          KILL === 'coordinator'
            ? `SIGKILL of broker ${node.port}, coordinator of group ${SUBSCRIBE_GROUP} (leader of post-create[${partition}])${controller}`
            : `SIGKILL of broker ${node.port}, leader of post-create[0]${controller}`,
        inflict: () => node.crash(),
        heal: async () => void (await node.start(240_000)),
        watch: () =>
          KafkaElectionWatch.connect({
            survivors: cluster.nodes.filter((n) => n !== node).flatMap((n) => n.brokers),
            deadNode: cluster.nodeIdOf(node),
            topic: 'post-create',
            partition,
            group: SUBSCRIBE_GROUP,
          }),
      };
    },
    destroy: () => cluster.destroy(),
  };
});
