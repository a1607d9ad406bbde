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

// RF 3, min.insync.replicas 2: a node is SIGKILLed under load and restarted.
failoverSuite('Kafka', async () => {
  const cluster = await KafkaCluster.start();
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
        (await cluster.activeController()) === cluster.nodeIdOf(node) ? ', the active controller' : '';
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
