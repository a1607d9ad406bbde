import { Subscription } from '../subscription.interface';
import type { RabbitMqTransport } from './rabbitmq-transport';

/** Consumes a subscription from RabbitMQ. (Work in progress: consumers land with the consumers issue.) */
export class RabbitSubscriber {
  constructor(
    private readonly transport: RabbitMqTransport,
    private readonly subscription: Subscription,
  ) {}

  async start(): Promise<void> {
    throw new Error(`RabbitMQ consumers are not implemented yet (group ${this.subscription.group}).`);
  }

  async stop(): Promise<void> {}
}
