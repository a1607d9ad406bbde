import { KafkaBroker } from '../infra/kafka-broker';
import { KafkaCluster } from '../infra/kafka-cluster';
import { RabbitCluster } from '../infra/rabbitmq-cluster';
import { RabbitMqNode } from '../infra/rabbitmq-node';

/** Takes a broker away and brings it back, for the outage scenario. */
export interface BrokerControl {
  /** For messages: `Kafka on 127.0.0.1:9092`. */
  readonly description: string;
  /** Resolves once the broker no longer serves clients. */
  stop(): Promise<void>;
  /** Resolves once the broker serves clients again. */
  start(): Promise<void>;
}

/** A Kafka broker this project runs (`npm run kafka:start`, or a private one): stopped and started with its data kept. */
export function kafkaBrokerControl(broker: KafkaBroker): BrokerControl {
  return {
    description: `Kafka on ${broker.brokers[0]}`,
    async stop() {
      if (!(await broker.stop())) {
        throw new Error(
          `The Kafka broker on ${broker.brokers[0]} was not started by this project, so the demo cannot stop it. ` +
            'Stop that broker and run the demo again (it then starts its own with `npm run kafka:start`).',
        );
      }
    },
    async start() {
      await broker.start();
    },
  };
}

/** A RabbitMQ node whose application is stopped and started (`rabbitmqctl stop_app` / `start_app`). */
export function rabbitNodeControl(node: RabbitMqNode): BrokerControl {
  return {
    description: `RabbitMQ ${node.nodeName ?? 'local node'} (${node.url.replace(/\/\/[^@]*@/, '//')})`,
    stop: () => node.stopApp(),
    start: () => node.startApp(),
  };
}

/** Kafka on a cluster (`--cluster`): the leader of `post-create[0]` is stopped and started; the others serve. */
export function kafkaClusterNodeControl(cluster: KafkaCluster): BrokerControl {
  let stopped: KafkaBroker | undefined;
  return {
    get description() {
      return `the Kafka node leading post-create[0]${stopped ? ` (${stopped.brokers[0]})` : ''}`;
    },
    async stop() {
      stopped = await cluster.leaderOf('post-create', 0);
      await stopped.stop();
    },
    async start() {
      await stopped?.start();
    },
  };
}

/**
 * RabbitMQ on a cluster (`--cluster`): the node holding the leader of the quorum queue `queue` has its
 * application stopped and started; a follower takes over. The services' own node is spared (they connect
 * to one URL), so the demo declares its queues through another node, which then leads them.
 */
export function rabbitClusterNodeControl(
  cluster: RabbitCluster,
  servicesNode: RabbitMqNode,
  queue: string,
): BrokerControl {
  let stopped: RabbitMqNode | undefined;
  let leads = true;
  return {
    get description() {
      const role = leads ? `leading quorum queue ${queue}` : `following quorum queue ${queue}`;
      return `the RabbitMQ node ${role}${stopped ? ` (${stopped.nodeName})` : ''}`;
    },
    async stop() {
      const leader = await cluster.leaderOf(queue);
      leads = leader !== servicesNode;
      stopped = leads ? leader : cluster.nodes.find((n) => n !== servicesNode);
      await stopped?.stopApp();
    },
    async start() {
      await stopped?.startApp();
    },
  };
}
