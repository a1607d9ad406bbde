import { Kafka } from 'kafkajs';
import { WireMessage } from '../../envelope/wire-message';
import { PublishOutcome } from '../publish-outcome';
import { IdempotentSends } from './idempotent-sends';
import { publishFailure } from './kafka-clients';
import { ReliableProducer } from './reliable-producer';

/**
 * The Kafka client that publishes for the transport (the relay's batches, dead-letter and retry copies):
 * an idempotent producer with acks=all, whichever library is behind it (`transport.producerClient`). After a
 * send that was not CONFIRMED, no later send uses that producer id (see `IdempotentSends`).
 */
export interface KafkaPublisher {
  /** Connects (on first use, or after a failed send); throws when the cluster cannot be reached. */
  connect(): Promise<void>;
  /**
   * Sends messages of one topic with acks=all; resolves with one outcome for all of them, never throws. A send
   * not started when `signal` aborts is not sent (AMBIGUOUS).
   */
  send(topic: string, messages: readonly WireMessage[], signal?: AbortSignal): Promise<PublishOutcome>;
  /** Closes the producers once their sends ended. */
  close(): Promise<void>;
}

/**
 * kafkajs's producer: the library's default publisher. Sends of one topic go one at a time.
 *
 * Why (kafkajs 2.2, `producer/sendMessages.js`): under a lock per broker, a send takes the next sequence
 * numbers of each partition (`eosManager.getSequence`, then `updateSequence(+count)`) and produces; when the
 * produce throws (a timeout, a dropped connection, a retriable error) it gives them back
 * (`updateSequence(-count)`) and releases the lock, and its retrier sends the same batch again a little later
 * with the same numbers, which the broker recognises as a retry. A send waiting for the lock meanwhile takes
 * those numbers first: if the broker had written the failed batch and the counts match, it answers the new
 * batch with success and writes nothing (a message confirmed and lost). When the retries run out, the numbers
 * stay given back and the next send reuses them the same way. Hence: one send at a time per topic (sequences
 * are per partition), and a new producer id after any send that was not confirmed. A send kafkajs resolves
 * can still have left a partition out (a leader moved during its retries): `ReliableProducer` counts it
 * AMBIGUOUS.
 */
export class KafkajsPublisher implements KafkaPublisher {
  private readonly sends: IdempotentSends<ReliableProducer>;

  constructor(kafka: Kafka) {
    this.sends = new IdempotentSends({
      open: async () => {
        const producer = new ReliableProducer(kafka);
        await producer.connect();
        return producer;
      },
      close: (producer) => producer.disconnect(),
      failure: publishFailure,
    });
  }

  connect(): Promise<void> {
    return this.sends.connect();
  }

  send(topic: string, messages: readonly WireMessage[], signal?: AbortSignal): Promise<PublishOutcome> {
    return this.sends.send(topic, (producer) => producer.send(topic, messages), signal);
  }

  close(): Promise<void> {
    return this.sends.close();
  }
}
