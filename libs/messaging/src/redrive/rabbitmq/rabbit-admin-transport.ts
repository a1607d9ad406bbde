import { hostname } from 'node:os';
import { RabbitMqTransport } from '../../transports/rabbitmq/rabbitmq-transport';
import { AdminCredential } from '../admin-connection';
import { adminAmqpUrl } from './rabbit-admin-url';

/**
 * The admin's own connection to RabbitMQ for `purpose` (a redrive, a replay), as the admin credential: one
 * message at a time, and a topology it only verifies (an admin operation never creates anything).
 */
export function adminRabbitTransport(
  url: string,
  credential: AdminCredential,
  purpose: 'redrive' | 'replay',
): RabbitMqTransport {
  return new RabbitMqTransport({
    url: adminAmqpUrl(url, credential),
    connectionName: `messaging-${purpose}@${hostname()}/${process.pid}`,
    heartbeatSeconds: 10,
    prefetch: 1,
    concurrency: 1,
    topology: 'verify',
  });
}
