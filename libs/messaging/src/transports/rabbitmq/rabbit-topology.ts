import * as amqp from 'amqplib';

/** Declares exchanges (and, for consumers, queues and bindings) once per channel. */
export class RabbitTopology {
  private readonly declared = new Set<string>();

  constructor(private readonly channel: amqp.Channel) {}

  /** A durable topic exchange per destination; routing keys are event types. */
  async exchanges(names: readonly string[]): Promise<void> {
    for (const name of names) {
      if (this.declared.has(`x:${name}`)) continue;
      await this.channel.assertExchange(name, 'topic', { durable: true });
      this.declared.add(`x:${name}`);
    }
  }
}
