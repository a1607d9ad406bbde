import { MessagingError } from './messaging.error';

/** RabbitMQ returned a mandatory message: no queue is bound for it, so nobody would receive it. */
export class UnroutableMessageError extends MessagingError {
  constructor(
    readonly exchange: string,
    readonly routingKey: string,
  ) {
    super(
      exchange === ''
        ? // The default exchange routes by queue name: a copy for a group's queue (a redrive, a replay).
          `RabbitMQ returned the message as unroutable: there is no queue '${routingKey}'. Start the ` +
            `consumer group whose queue it is (it declares it), or apply the topology.`
        : `RabbitMQ returned the message as unroutable: no queue is bound to exchange '${exchange}' for ` +
            `routing key '${routingKey}'. Start a consumer of that destination (it declares its queue) or bind one.`,
    );
    this.name = 'UnroutableMessageError';
  }
}
