import { randomBytes } from 'node:crypto';

/**
 * A name no other suite or run uses: tests run in parallel and again, so every schema, topic, queue and
 * consumer group carries one. Lower-case letters, digits and '_' fit PostgreSQL, Kafka and RabbitMQ alike.
 */
export function uniqueName(prefix: string): string {
  const safe = prefix.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  return `${safe}_${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}
