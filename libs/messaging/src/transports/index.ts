export * from './kafka/kafka-transport';
export * from './message-transport.interface';
export * from './publish-outcome';
export * from './rabbitmq/rabbitmq-transport';
export * from './subscription.interface';
export * from '../retry/transport-capabilities';
