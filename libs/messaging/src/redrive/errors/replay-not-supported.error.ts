import { MessagingError } from '../../errors/messaging.error';

/**
 * Replay asked of a broker that keeps nothing to replay from: a RabbitMQ queue forgets what it delivered, and
 * the library archives only discarded dead letters (`<dlq>.archive`). Replay works on Kafka only.
 */
export class ReplayNotSupportedError extends MessagingError {
  constructor(
    /** The broker the replay was asked of. */
    readonly transport: string,
  ) {
    super(
      `Replay refused: ${transport} keeps no record of delivered messages (a queue forgets what it delivered, ` +
        'and the library archives only discarded dead letters): replay works on Kafka only.',
    );
    this.name = 'ReplayNotSupportedError';
  }
}
