import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Clock } from './common/clock';
import { assertPeerInstalled } from './common/optional-peer';
import { ResolvedMessagingOptions } from './options/resolve-messaging-options';
import type * as KafkaModule from './transports/kafka/kafka-transport';
import { MessageTransport } from './transports/message-transport.interface';
import type * as RabbitModule from './transports/rabbitmq/rabbitmq-transport';

/**
 * Builds the transport the options name. Nothing connects until the first use. Each transport's module,
 * and the client library it needs (an optional peer dependency), is loaded only when it is chosen.
 */
export function createTransport(options: ResolvedMessagingOptions, clock: Clock): MessageTransport {
  const { transport, serviceName, consumers } = options;
  if (transport.kind === 'kafka') {
    assertPeerInstalled('kafkajs');
    if (transport.producerClient === 'platformatic') assertPeerInstalled('@platformatic/kafka');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when Kafka is chosen
    const { KafkaTransport } = require('./transports/kafka/kafka-transport') as typeof KafkaModule;
    return new KafkaTransport(
      {
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
        producerClient: transport.producerClient,
      },
      clock,
    );
  }
  assertPeerInstalled('amqplib');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when RabbitMQ is chosen
  const { RabbitMqTransport } = require('./transports/rabbitmq/rabbitmq-transport') as typeof RabbitModule;
  return new RabbitMqTransport(
    {
      url: transport.url,
      // Shown by RabbitMQ beside each connection: which service, host and process it belongs to.
      connectionName: `${serviceName}@${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`,
      heartbeatSeconds: transport.heartbeatSeconds,
      prefetch: transport.prefetch,
      concurrency: consumers.concurrency,
      topology: options.topology,
      queueType: transport.queueType,
      queueTypes: transport.queueTypes,
      journals: transport.journals,
    },
    clock,
  );
}
