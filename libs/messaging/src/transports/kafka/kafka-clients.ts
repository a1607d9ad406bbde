import { KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } from 'kafkajs';
import { PublishOutcome } from '../publish-outcome';

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
