import { MessagingError } from './messaging.error';

/**
 * `MessagingStatus.consumersJoined()` waited its whole timeout and some consumer groups still do not receive
 * deliveries (on Kafka: a killed member's session not yet expired, a broker away; on RabbitMQ: subscribing
 * again while the broker is away).
 */
export class ConsumersStillJoiningError extends MessagingError {
  constructor(
    /** The groups still joining when the wait ended. */
    readonly groups: readonly string[],
    /** How long it waited. */
    readonly timeoutMs: number,
  ) {
    super(`Consumer groups still joining after ${timeoutMs} ms: ${groups.join(', ')}`);
    this.name = 'ConsumersStillJoiningError';
  }
}
