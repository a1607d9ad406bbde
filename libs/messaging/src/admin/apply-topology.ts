import { hostname } from 'node:os';
import { AdminCredential, checkAdminConnection, RedriveBroker } from '../redrive/admin-connection';
import { adminAmqpUrl } from '../redrive/rabbitmq/rabbit-admin-url';
import { requireCredential } from '../redrive/redrive-guards';
import { assertPeerInstalled } from '../common/optional-peer';
import type * as KafkaModule from '../transports/kafka/kafka-transport';
import { MessageTransport } from '../transports/message-transport.interface';
import type * as RabbitModule from '../transports/rabbitmq/rabbitmq-transport';
import { MessagingTopology, RabbitQueueType } from '../topology/messaging-topology';
import { MessagingTopologyMissingError } from '../topology/messaging-topology-missing.error';

/** How Kafka topics are created by `applyTopology()`. */
export interface TopicSettings {
  /** Partitions of a created topic. Default 3. */
  readonly numPartitions?: number;
  /** Replicas of a created topic. Default 1 (a single broker); 3 in production. */
  readonly replicationFactor?: number;
}

/** What `applyTopology()` and `checkTopology()` need. */
export interface TopologyAdminOptions {
  /** The broker, reached as an admin allowed to create topics, exchanges and queues. */
  readonly broker: RedriveBroker;
  /** The admin credential; without one both functions throw `MissingAdminCredentialError`. */
  readonly credential: AdminCredential | undefined;
  /** Partitions and replicas of the topics it creates (Kafka only; RabbitMQ ignores it). */
  readonly topics?: TopicSettings;
  /** Type of the queues of groups that name none (RabbitMQ only). Default `classic`; `quorum` on a cluster. */
  readonly queueType?: RabbitQueueType;
}

/**
 * Declares `topology` as an admin (`nest-messaging topology apply`): destinations, and per group its work queue
 * (RabbitMQ), retry destinations and dead-letter destination. Idempotent: what exists is left as it is.
 * Then checks that everything is there and throws `MessagingTopologyMissingError` if not.
 */
export async function applyTopology(
  options: TopologyAdminOptions,
  topology: MessagingTopology,
): Promise<void> {
  await withAdminTransport(options, async (transport) => {
    await transport.declareTopology(topology);
    const missing = await transport.missingTopology(topology);
    if (missing.length > 0) throw new MessagingTopologyMissingError(transport.kind, missing, topology);
  });
}

/** What `topology` needs that does not exist (empty: all there), checked as an admin without declaring. */
export async function checkTopology(
  options: TopologyAdminOptions,
  topology: MessagingTopology,
): Promise<string[]> {
  return withAdminTransport(options, (transport) => transport.missingTopology(topology));
}

async function withAdminTransport<T>(
  options: TopologyAdminOptions,
  work: (transport: MessageTransport) => Promise<T>,
): Promise<T> {
  const { broker } = options;
  const noPassword = broker.kind === 'kafka' && !broker.sasl && broker.allowPlaintextLocal === true;
  const credential = requireCredential(options.credential, noPassword);
  checkAdminConnection(broker);
  const transport = adminTransport(options, credential);
  try {
    return await work(transport);
  } finally {
    await transport.close();
  }
}

/**
 * The transport of the admin's broker, declaring (never only checking) its topology. Only the chosen
 * broker's module and client library (an optional peer dependency) are loaded.
 */
function adminTransport(options: TopologyAdminOptions, credential: AdminCredential): MessageTransport {
  const { broker } = options;
  if (broker.kind === 'rabbitmq') {
    assertPeerInstalled('amqplib', 'Topology on RabbitMQ');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for RabbitMQ
    const { RabbitMqTransport } = require('../transports/rabbitmq/rabbitmq-transport') as typeof RabbitModule;
    return new RabbitMqTransport({
      url: adminAmqpUrl(broker.url, credential),
      connectionName: `messaging-topology@${hostname()}/${process.pid}`,
      heartbeatSeconds: 10,
      prefetch: 1,
      concurrency: 1,
      topology: 'declare',
      queueType: options.queueType ?? 'classic',
    });
  }
  assertPeerInstalled('kafkajs', 'Topology on Kafka');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for Kafka
  const { KafkaTransport } = require('../transports/kafka/kafka-transport') as typeof KafkaModule;
  return new KafkaTransport({
    clientId: `messaging-topology-${credential.principal}`,
    brokers: broker.brokers,
    sasl: broker.sasl && {
      mechanism: broker.sasl,
      username: credential.principal,
      password: credential.secret,
    },
    ssl: broker.ssl,
    connectionTimeoutMs: 5_000,
    sessionTimeoutMs: 30_000,
    numPartitions: options.topics?.numPartitions ?? 3,
    replicationFactor: options.topics?.replicationFactor ?? 1,
    concurrency: 1,
    topology: 'declare',
  });
}
