import { MessagingError } from '../../errors/messaging.error';

/**
 * The redrive target does not exist, or no target could be derived from the messages: name an existing
 * one (Kafka: a topic; RabbitMQ: a queue, usually the group's work queue `<destination>.<group>`).
 */
export class RedriveTargetNotFoundError extends MessagingError {
  constructor(
    /** The dead-letter destination to redrive. */
    readonly source: string,
    /** The target that does not exist; undefined when none was given and none could be derived. */
    readonly target: string | undefined,
  ) {
    super(
      target === undefined
        ? `Cannot tell where the messages of '${source}' came from; pass a target (--target).`
        : `The redrive target '${target}' does not exist; a redrive never creates one. Pass an existing target.`,
    );
    this.name = 'RedriveTargetNotFoundError';
  }
}
