import { Kafka, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError, Partitioners, Producer } from 'kafkajs';
import { WireMessage } from '../../envelope/wire-message';
import { CONFIRMED, PublishOutcome } from '../publish-outcome';

/** A kafkajs client (producer, admin) connected on first use, and again after a failed connect or a reset. */
export class LazyKafkaClient<T extends { connect(): Promise<void>; disconnect(): Promise<void> }> {
  private current?: Promise<T>;

  constructor(private readonly create: () => T) {}

  get(): Promise<T> {
    this.current ??= (async () => {
      const client = this.create();
      await client.connect();
      return client;
    })();
    this.current.catch(() => (this.current = undefined));
    return this.current;
  }

  /** Disconnects; the next `get()` connects a new client. */
  async reset(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    await current?.then((client) => client.disconnect()).catch(() => undefined);
  }
}

/** The library's producer: idempotent, one request in flight (order), acks=all on every send. */
export function reliableProducer(kafka: Kafka): Producer {
  return kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 2_000 },
  });
}

/** Sends messages of one topic with acks=all; resolves with one outcome for all of them. */
export async function sendConfirmed(
  producer: Producer,
  topic: string,
  messages: readonly WireMessage[],
): Promise<PublishOutcome> {
  try {
    await producer.send({
      topic,
      acks: -1,
      messages: messages.map((m) => ({ key: m.key, value: m.body, headers: { ...m.headers } })),
    });
    return CONFIRMED;
  } catch (error) {
    return publishFailure(error);
  }
}

/**
 * A send that failed: REJECTED only when the broker answered with a non-retriable refusal (too large, not
 * authorised: nothing was written); AMBIGUOUS otherwise (timeouts, dropped connections, retries exhausted),
 * since the last attempt may have been written.
 */
export function publishFailure(error: unknown): Exclude<PublishOutcome, { status: 'CONFIRMED' }> {
  const e = error instanceof Error ? error : new Error(String(error));
  const cause = error instanceof KafkaJSNumberOfRetriesExceeded ? (error.cause as unknown) : error;
  if (cause instanceof KafkaJSProtocolError && !cause.retriable) return { status: 'REJECTED', error: e };
  return { status: 'AMBIGUOUS', error: e };
}
