import { newMessageId } from 'nest-reliable-messaging';
import { encodeEnvelope, WireMessage } from 'nest-reliable-messaging/testing';
import { z } from 'zod';
import { defineEvent, EventDefinition } from 'nest-reliable-messaging';

/** The payload every scenario sends: a run id, a sequence number, one of `keys` keys and padding. */
export const benchPayloadSchema = z.object({
  run: z.string(),
  seq: z.number().int(),
  key: z.string(),
  pad: z.string(),
});

export type BenchPayload = z.output<typeof benchPayloadSchema>;
export type BenchEvent = EventDefinition<'BenchEvent', BenchPayload>;

export const BENCH_EVENT_TYPE = 'BenchEvent';

/** The bench's event on `destination` (a Kafka topic or RabbitMQ exchange of the run's own), keyed by `key`. */
export function benchEvent(destination: string): BenchEvent {
  return defineEvent({ type: BENCH_EVENT_TYPE, destination, schema: benchPayloadSchema, key: (p) => p.key });
}

/** The ordering key of message `seq` among `keys` keys. */
export function keyOf(seq: number, keys: number): string {
  return `key-${seq % keys}`;
}

/** Padding that makes a payload about `payloadBytes` long as JSON (no layer compresses it: 'x' is fine). */
export function padding(payloadBytes: number): string {
  const bare = JSON.stringify({ key: 'key-00', pad: '', run: 'run_0000000000', seq: 10_000 });
  return 'x'.repeat(Math.max(0, payloadBytes - bare.length));
}

export function benchPayload(run: string, seq: number, keys: number, pad: string): BenchPayload {
  return { run, seq, key: keyOf(seq, keys), pad };
}

/** `count` bench messages of run `run` to `destination`, encoded as the relay puts them on the wire. */
export function benchWireMessages(
  run: string,
  destination: string,
  count: number,
  keys: number,
  pad: string,
): WireMessage[] {
  return Array.from({ length: count }, (_, seq) =>
    encodeEnvelope(
      {
        messageId: newMessageId(),
        type: BENCH_EVENT_TYPE,
        destination,
        key: keyOf(seq, keys),
        occurredAt: new Date(),
        headers: {},
      },
      JSON.stringify(benchPayload(run, seq, keys, pad)),
    ),
  );
}
