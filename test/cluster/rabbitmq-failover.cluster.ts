import { RabbitCluster } from '../harness/rabbitmq-cluster';
import { failoverSuite } from './support/failover-suite';

// The services connect to node 0; the admin declares the quorum queue through node 1, which holds its first
// leader. That node is SIGKILLed under load and restarted: a follower takes over the queue.
failoverSuite('RabbitMQ', async () => {
  const cluster = await RabbitCluster.start();
  const [services, admin] = cluster.nodes;
  return {
    access: { transport: 'rabbitmq', kafkaBrokers: [], amqpUrl: services.url, adminAmqpUrl: admin.url },
    fault: async () => {
      const leader = await cluster.leaderOf('post-create.subscribe-service');
      return {
        label: `SIGKILL of ${leader.nodeName}, leader of quorum queue post-create.subscribe-service`,
        inflict: () => leader.kill(),
        heal: () => leader.restart(),
      };
    },
    destroy: () => cluster.destroy(),
  };
});
