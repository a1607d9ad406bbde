import { RabbitMqNode } from '../../tools/infra/rabbitmq-node';

export { RabbitMqNode };

/**
 * A RabbitMQ node of a suite's own, on free ports with its own data (like `startPrivateBroker()` for Kafka):
 * the suite may stop and start its application (`stopApp()` / `startApp()`) without touching the shared node
 * on 5672 that the suites beside it use. Remove it with `destroy()`.
 */
export function startPrivateRabbitNode(): Promise<RabbitMqNode> {
  return RabbitMqNode.startPrivate('test');
}
