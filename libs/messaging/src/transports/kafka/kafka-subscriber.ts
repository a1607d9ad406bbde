import { Kafka } from 'kafkajs';
import { Subscription } from '../subscription.interface';
import type { KafkaTransport } from './kafka-transport';

/** Consumes a subscription from Kafka. (Work in progress: consumers land with the consumers issue.) */
export class KafkaSubscriber {
  constructor(
    private readonly kafka: Kafka,
    private readonly transport: KafkaTransport,
    private readonly subscription: Subscription,
  ) {}

  async start(): Promise<void> {
    throw new Error(`Kafka consumers are not implemented yet (group ${this.subscription.group}).`);
  }

  async stop(): Promise<void> {}
}
