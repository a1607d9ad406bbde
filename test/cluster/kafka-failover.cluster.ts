import { SUBSCRIBE_GROUP } from '../../tools/demo/blog-stack';
import { KafkaCluster } from '../harness/kafka-cluster';
import { failoverSuite } from './support/failover-suite';
import { KafkaElectionWatch } from './support/kafka-election-watch';

// RF 3, min.insync.replicas 2: the leader of post-create[0] is SIGKILLed under load and restarted.
failoverSuite('Kafka', async () => {
  const cluster = await KafkaCluster.start();
  return {
    access: { transport: 'kafka', kafkaBrokers: cluster.brokers, amqpUrl: '', adminAmqpUrl: '' },
    fault: async () => {
      const leader = await cluster.leaderOf('post-create', 0);
      return {
        label: `SIGKILL of broker ${leader.port}, leader of post-create[0]`,
        inflict: () => leader.crash(),
        heal: async () => void (await leader.start(240_000)),
        watch: () =>
          KafkaElectionWatch.connect({
            survivors: cluster.nodes.filter((n) => n !== leader).flatMap((n) => n.brokers),
            deadNode: cluster.nodeIdOf(leader),
            topic: 'post-create',
            partition: 0,
            group: SUBSCRIBE_GROUP,
          }),
      };
    },
    destroy: () => cluster.destroy(),
  };
});
