import { KafkaBroker } from '../infra/kafka-broker';
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
