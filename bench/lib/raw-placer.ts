import { newMessageId } from 'nest-reliable-messaging';
import { encodeEnvelope, WireMessage } from 'nest-reliable-messaging/testing';
import { BENCH_EVENT_TYPE, BenchEvent, benchPayload, keyOf, padding } from './bench-event';
import { rawPublisher, RawPublisher } from './raw-publishers';
import { TransportKind } from './plan';

/** What a latency run calls at its offered rate: the writer's business transaction, or a raw publish. */
export interface Placer {
  place(run: string, seq: number): Promise<void>;
}

/**
 * The latency floor: the bench message published straight with the raw client (the relay's guarantee:
 * Kafka idempotent acks=all, RabbitMQ confirmed), no database, no outbox. Messages offered while a publish
 * is on its way go together in the next one, as the relay batches what it finds pending. `place` resolves
 * once the broker confirmed the message (where the writer's resolves at its commit): the latency then runs
 * from the message being durable on the broker to the handler's start.
 */
export class RawPlacer implements Placer {
  private pending: Array<{ message: WireMessage; done: (error?: Error) => void }> = [];
  private sending = false;

  private constructor(
    private readonly publisher: RawPublisher,
    private readonly event: BenchEvent,
    private readonly pad: string,
    private readonly keys: number,
    private readonly beforePublish?: (run: string, seq: number) => Promise<void>,
  ) {}

  /** `beforePublish`: the business write committed before the message is handed to the client (`raw-tx`). */
  static async start(
    kind: TransportKind,
    event: BenchEvent,
    payloadBytes: number,
    keys: number,
    beforePublish?: (run: string, seq: number) => Promise<void>,
  ): Promise<RawPlacer> {
    return new RawPlacer(await rawPublisher(kind), event, padding(payloadBytes), keys, beforePublish);
  }

  async place(run: string, seq: number): Promise<void> {
    await this.beforePublish?.(run, seq);
    const message = encodeEnvelope(
      {
        messageId: newMessageId(),
        type: BENCH_EVENT_TYPE,
        destination: this.event.destination,
        key: keyOf(seq, this.keys),
        occurredAt: new Date(),
        headers: {},
      },
      JSON.stringify(benchPayload(run, seq, this.keys, this.pad)),
    );
    await new Promise<void>((resolve, reject) => {
      this.pending.push({
        message,
        done: (error) =>
          error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(),
      });
      void this.flush();
    });
  }

  async stop(): Promise<void> {
    await this.publisher.close();
  }

  private async flush(): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending;
        this.pending = [];
        try {
          await this.publisher.publish(batch.map((p) => p.message));
          batch.forEach((p) => p.done());
        } catch (error) {
          batch.forEach((p) => p.done(error as Error));
        }
      }
    } finally {
      this.sending = false;
    }
  }
}
