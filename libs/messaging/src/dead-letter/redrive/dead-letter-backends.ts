import { AdminCredential, RedriveBroker } from './admin-connection';
import { DeadLetterBackend } from './dead-letter-backend.interface';
import { KafkaDeadLetters } from './kafka/kafka-dead-letters';
import { RabbitDeadLetters } from './rabbitmq/rabbit-dead-letters';

/** The backend for `broker`, logging in with `credential`. Connects on first use. */
export function createDeadLetterBackend(
  broker: RedriveBroker,
  credential: AdminCredential,
): DeadLetterBackend {
  return broker.kind === 'rabbitmq'
    ? new RabbitDeadLetters(broker.url, credential)
    : new KafkaDeadLetters(broker, credential);
}
