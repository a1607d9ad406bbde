import { PublishOutcome } from '../publish-outcome';

/** How `IdempotentSends` gets, and gets rid of, a producer (one producer id each). */
export interface ProducerFactory<P> {
  /** A connected producer with a producer id of its own. */
  open(): Promise<P>;
  /** Closes a producer no send uses any more. */
  close(producer: P): Promise<void>;
  /** The outcome of a send whose producer could not be opened. */
  failure(error: unknown): Exclude<PublishOutcome, { status: 'CONFIRMED' }>;
}

/** One producer and the sends on it. */
interface Generation<P> {
  readonly producer: Promise<P>;
  inFlight: number;
  retired: boolean;
}

/**
 * Sends on an idempotent producer, kept from reusing sequence numbers. The broker takes a batch whose
 * producer id, partition and first sequence number match one of the last it wrote as a retry of it: it
 * answers success and writes nothing. So after a send that was not CONFIRMED (the broker may have written
 * it; kafkajs takes the batch's sequence numbers back when a produce fails, @platformatic/kafka counts them
 * only when the broker answers) no later send may use that producer id: the producer is retired, the next
 * send opens a new one (a new id, sequences from 0), the old one is closed once its last send ended.
 *
 * - Sends of one lane go one at a time, in order: a send queued behind a failed one starts only after the
 *   failure retired the producer. (kafkajs: a lane per topic, sequence numbers are per partition;
 *   @platformatic/kafka: one lane, see `PlatformaticPublisher`.)
 * - A send whose caller stopped waiting (`signal` aborted) is not started: AMBIGUOUS at once, as the caller
 *   already counts it. One already on the wire runs to its end (the client's own retries of it reuse its
 *   sequence numbers, as they must) and retires its producer whatever the answer: nobody learns it.
 */
export class IdempotentSends<P> {
  private current?: Generation<P>;
  private readonly lanes = new Map<string, Promise<unknown>>();
  private readonly generations = new Set<Generation<P>>();

  constructor(private readonly factory: ProducerFactory<P>) {}

  /** Opens the producer new sends go on, unless open; throws when it cannot. */
  async connect(): Promise<void> {
    await this.generation().producer;
  }

  /** Runs `attempt` on the producer when the lane's earlier sends ended. Never rejects. */
  send(
    lane: string,
    attempt: (producer: P) => Promise<PublishOutcome>,
    signal?: AbortSignal,
  ): Promise<PublishOutcome> {
    const previous = this.lanes.get(lane) ?? Promise.resolve();
    const sending = previous.then(() => this.sendNow(attempt, signal));
    this.lanes.set(lane, sending);
    void sending.finally(() => {
      if (this.lanes.get(lane) === sending) this.lanes.delete(lane);
    });
    return sending;
  }

  /** Retires the producer (the next send opens a new one) and closes every producer once its sends ended. */
  async close(): Promise<void> {
    if (this.current) this.retire(this.current);
    while (this.lanes.size > 0) await Promise.allSettled([...this.lanes.values()]);
    await Promise.all([...this.generations].map((g) => this.closeIfIdle(g)));
  }

  private async sendNow(
    attempt: (producer: P) => Promise<PublishOutcome>,
    signal?: AbortSignal,
  ): Promise<PublishOutcome> {
    if (signal?.aborted) return notSent();
    const generation = this.generation();
    generation.inFlight += 1;
    try {
      let producer: P;
      try {
        producer = await generation.producer;
      } catch (error) {
        this.retire(generation);
        return this.factory.failure(error);
      }
      const outcome = await attempt(producer);
      if (outcome.status !== 'CONFIRMED' || signal?.aborted) this.retire(generation);
      return outcome;
    } finally {
      generation.inFlight -= 1;
      void this.closeIfIdle(generation);
    }
  }

  private generation(): Generation<P> {
    if (this.current && !this.current.retired) return this.current;
    const producer = this.factory.open();
    const generation: Generation<P> = { producer, inFlight: 0, retired: false };
    producer.catch(() => this.retire(generation));
    this.current = generation;
    this.generations.add(generation);
    return generation;
  }

  private retire(generation: Generation<P>): void {
    generation.retired = true;
    if (this.current === generation) this.current = undefined;
  }

  private async closeIfIdle(generation: Generation<P>): Promise<void> {
    if (!generation.retired || generation.inFlight > 0 || !this.generations.delete(generation)) return;
    const producer = await generation.producer.catch(() => undefined);
    if (producer !== undefined) await this.factory.close(producer).catch(() => undefined);
  }
}

/** The outcome of a send its caller gave up on before it started: nothing was sent. */
function notSent(): PublishOutcome {
  return {
    status: 'AMBIGUOUS',
    error: new Error('not sent: the caller stopped waiting before the send could start'),
  };
}
