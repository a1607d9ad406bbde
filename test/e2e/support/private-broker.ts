import { BrokerControl, kafkaBrokerControl, rabbitNodeControl } from '../../../tools/demo/broker-control';
import { infraEnv } from '../../harness/infra';
import { startPrivateBroker } from '../../harness/kafka';
import { startPrivateRabbitNode } from '../../harness/rabbitmq-node';

/** A broker of the suite's own, which its outage scenario stops and starts. */
export interface PrivateBroker {
  readonly kafkaBrokers: string[];
  readonly amqpUrl: string;
  readonly outage: BrokerControl;
  destroy(): Promise<void>;
}

/** A private Kafka broker or RabbitMQ node: the shared ones on 9092 and 5672 are never stopped by a test. */
export async function startPrivateBrokerFor(transport: 'kafka' | 'rabbitmq'): Promise<PrivateBroker> {
  if (transport === 'kafka') {
    const broker = await startPrivateBroker();
    return {
      kafkaBrokers: broker.brokers,
      amqpUrl: infraEnv().amqpUrl,
      outage: kafkaBrokerControl(broker),
      destroy: () => broker.destroy(),
    };
  }
  const node = await startPrivateRabbitNode();
  return {
    kafkaBrokers: infraEnv().kafkaBrokers,
    amqpUrl: node.url,
    outage: rabbitNodeControl(node),
    destroy: () => node.destroy(),
  };
}
