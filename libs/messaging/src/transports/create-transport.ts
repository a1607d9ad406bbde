import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { KafkaTransport } from './kafka/kafka-transport';
import { MessageTransport } from './message-transport.interface';
import { RabbitMqTransport } from './rabbitmq/rabbitmq-transport';

/** Builds the transport the options name. Nothing connects until the first use. */
export function createTransport(options: ResolvedMessagingOptions): MessageTransport {
  const { transport, serviceName, consumers } = options;
  if (transport.kind === 'kafka') {
    return new KafkaTransport({
      clientId: transport.clientId ?? serviceName,
      brokers: transport.brokers,
      sasl: transport.sasl,
      ssl: transport.ssl,
      connectionTimeoutMs: transport.connectionTimeoutMs,
      sessionTimeoutMs: transport.sessionTimeoutMs,
      numPartitions: transport.topics.numPartitions,
      replicationFactor: transport.topics.replicationFactor,
      concurrency: consumers.concurrency,
      topology: options.topology,
    });
  }
  return new RabbitMqTransport({
    url: transport.url,
    // Shown by RabbitMQ beside each connection: which service, host and process it belongs to.
    connectionName: `${serviceName}@${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`,
    heartbeatSeconds: transport.heartbeatSeconds,
    prefetch: transport.prefetch,
    concurrency: consumers.concurrency,
    topology: options.topology,
  });
}
