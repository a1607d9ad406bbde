import { Kafka, Producer } from 'kafkajs';
import { WireMessage } from '../../envelope/wire-message';
import { PublishOutcome } from '../publish-outcome';
import { LazyKafkaClient, publishFailure, reliableProducer, sendConfirmed } from './kafka-clients';

/**
 * The Kafka client that publishes for the transport (the relay's batches, dead-letter and retry copies):
 * an idempotent producer with acks=all, whichever library is behind it (`transport.producerClient`).
 */
export interface KafkaPublisher {
  /** Connects (on first use, or after `reset`); throws when the cluster cannot be reached. */
  connect(): Promise<void>;
  /** Sends messages of one topic with acks=all; resolves with one outcome for all of them, never throws. */
  send(topic: string, messages: readonly WireMessage[]): Promise<PublishOutcome>;
  /**
   * Drops the producer after a failed send: the next send connects afresh with a new producer id, so that
   * no later batch reuses the sequence numbers of one the broker may have written.
   */
  reset(): Promise<void>;
}

/** kafkajs's producer: the library's default publisher. */
export class KafkajsPublisher implements KafkaPublisher {
  private readonly producer: LazyKafkaClient<Producer>;

  constructor(kafka: Kafka) {
    this.producer = new LazyKafkaClient(() => reliableProducer(kafka));
  }

  async connect(): Promise<void> {
    await this.producer.get();
  }

  async send(topic: string, messages: readonly WireMessage[]): Promise<PublishOutcome> {
    try {
      return await sendConfirmed(await this.producer.get(), topic, messages);
    } catch (error) {
      return publishFailure(error); // the connect failed
    }
  }

  reset(): Promise<void> {
    return this.producer.reset();
  }
}
