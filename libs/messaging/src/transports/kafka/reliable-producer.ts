import { Kafka, Message, Partitioners, Producer } from 'kafkajs';
import { WireMessage } from '../../envelope/wire-message';
import { CONFIRMED, PublishOutcome } from '../publish-outcome';
import { publishFailure } from './kafka-clients';
import { PartitionChoices } from './partition-choices';

/**
 * The library's kafkajs producer: idempotent, one request in flight (order), acks=all on every send, and a
 * send counted CONFIRMED only when the brokers' answers cover every partition its messages went to (see
 * `PartitionChoices`: kafkajs can resolve a send that left a partition out when a leader moves).
 */
export class ReliableProducer {
  private readonly choices = new PartitionChoices();
  private readonly producer: Producer;

  constructor(kafka: Kafka) {
    this.producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: this.choices.partitioner(Partitioners.DefaultPartitioner),
      retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 2_000 },
    });
  }

  connect(): Promise<void> {
    return this.producer.connect();
  }

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }

  /** Sends messages of one topic with acks=all; resolves with one outcome for all of them. */
  async send(topic: string, messages: readonly WireMessage[]): Promise<PublishOutcome> {
    const sent: Message[] = messages.map((m) => ({ key: m.key, value: m.body, headers: { ...m.headers } }));
    try {
      const answers = await this.producer.send({ topic, acks: -1, messages: sent });
      const unconfirmed = this.choices.unconfirmed(topic, sent, answers);
      return unconfirmed === undefined ? CONFIRMED : { status: 'AMBIGUOUS', error: new Error(unconfirmed) };
    } catch (error) {
      return publishFailure(error);
    }
  }
}
