import { MessagingError } from '../../errors/messaging.error';

/** The dead-letter destination to read does not exist (a Kafka topic or a RabbitMQ queue). Check its name. */
export class DeadLetterQueueNotFoundError extends MessagingError {
  constructor(
    /** The dead-letter destination that was asked for. */
    readonly source: string,
  ) {
    super(
      `No dead-letter destination '${source}'. Its name is '<destination>.<group>.dlq'; ` +
        `'nest-messaging dlq list' shows the ones there are.`,
    );
    this.name = 'DeadLetterQueueNotFoundError';
  }
}
