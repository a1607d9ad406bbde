import type { MessagingTopology } from 'nest-reliable-messaging';
import { applyTopology } from 'nest-reliable-messaging/redrive';
import { LOCAL_KEY_SECRET } from '../infra/local-secrets';

/** The broker objects the two demo services need: PostCreated's destination and subscribe-service's group. */
export const BLOG_TOPOLOGY: MessagingTopology = {
  destinations: ['post-create'],
  // INLINE retries (PostCreatedHandler): no retry destinations, only the dead-letter destination.
  groups: [{ group: 'subscribe-service', destination: 'post-create', retryTiersMs: [] }],
};

/** Where the demo's broker is. */
export interface BlogBroker {
  readonly transport: 'kafka' | 'rabbitmq';
  readonly kafkaBrokers: readonly string[];
  /** The RabbitMQ URL; its user is the admin here (local development: `guest`). */
  readonly amqpUrl: string;
  /** A cluster (issue 19): Kafka topics with replication factor 3, RabbitMQ quorum queues. Default false. */
  readonly cluster?: boolean;
}

/**
 * `messaging topology apply` for the demo, before its services start: they run in the default
 * `topology: 'verify'` mode and only check it, as in production. Local development only: the local Kafka
 * broker has no SASL (allowed on loopback addresses) and the local RabbitMQ user is the admin.
 */
export async function applyBlogTopology(broker: BlogBroker): Promise<void> {
  if (broker.transport === 'kafka') {
    const kafka = { kind: 'kafka' as const, brokers: [...broker.kafkaBrokers], allowPlaintextLocal: true };
    const topics = { numPartitions: 3, replicationFactor: broker.cluster ? 3 : 1 };
    await applyTopology(
      { broker: kafka, credential: { principal: 'local-admin', secret: '-' }, topics },
      BLOG_TOPOLOGY,
    );
    return;
  }
  const url = new URL(broker.amqpUrl);
  const credential = {
    principal: decodeURIComponent(url.username),
    secret: decodeURIComponent(url.password),
  };
  await applyTopology(
    {
      broker: { kind: 'rabbitmq', url: broker.amqpUrl },
      credential,
      queueType: broker.cluster ? 'quorum' : 'classic',
    },
    BLOG_TOPOLOGY,
  );
}

/** What both demo services get besides their broker and database: the local key secret. */
export const BLOG_SERVICE_ENV = { MESSAGING_KEY_SECRET: LOCAL_KEY_SECRET } as const;
