import { MessagingError } from './messaging.error';

/** RabbitMQ returned a mandatory message: no queue is bound for it, so nobody would receive it. */
export class UnroutableMessageError extends MessagingError {
  constructor(
    readonly exchange: string,
    readonly routingKey: string,
  ) {
    super(
      `RabbitMQ returned the message as unroutable: no queue is bound to exchange '${exchange}' for ` +
        `routing key '${routingKey}'. Start a consumer of that destination (it declares its queue) or bind one.`,
    );
    this.name = 'UnroutableMessageError';
  }
}
