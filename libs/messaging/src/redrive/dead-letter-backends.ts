import { assertPeerInstalled } from '../common/optional-peer';
import { AdminCredential, RedriveBroker } from './admin-connection';
import { DeadLetterBackend } from './dead-letter-backend.interface';
import type * as KafkaModule from './kafka/kafka-dead-letters';
import type * as RabbitModule from './rabbitmq/rabbit-dead-letters';

/**
 * The backend for `broker`, logging in with `credential`. Connects on first use. Only the chosen broker's
 * module and client library (an optional peer dependency) are loaded.
 */
export function createDeadLetterBackend(
  broker: RedriveBroker,
  credential: AdminCredential,
): DeadLetterBackend {
  if (broker.kind === 'rabbitmq') {
    assertPeerInstalled('amqplib', 'Redrive on RabbitMQ');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for RabbitMQ
    const { RabbitDeadLetters } = require('./rabbitmq/rabbit-dead-letters') as typeof RabbitModule;
    return new RabbitDeadLetters(broker.url, credential);
  }
  assertPeerInstalled('kafkajs', 'Redrive on Kafka');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for Kafka
  const { KafkaDeadLetters } = require('./kafka/kafka-dead-letters') as typeof KafkaModule;
  return new KafkaDeadLetters(broker, credential);
}
