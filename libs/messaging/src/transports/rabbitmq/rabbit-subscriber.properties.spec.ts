import { EventEmitter } from 'node:events';
import { Logger } from '@nestjs/common';
import * as amqp from 'amqplib';
import fc from 'fast-check';
import { FakeClock } from '../../common/fake-clock';
import { MessageHeaders } from '../../envelope/message-headers';
import { Delivery, Settlement, Subscription } from '../delivery-contract';
import { RabbitConnection } from './rabbit-connection';
import { RabbitSubscriber } from './rabbit-subscriber';
import { useQuietWarnings } from '../../../spec-support/quiet-warnings';

const DESTINATION = 'orders';

/** An amqplib channel as far as the subscriber uses it, recording every ack and nack. */
class RecordingChannel extends EventEmitter {
  readonly acks: number[] = [];
  readonly nacks: Array<{ tag: number; requeue: boolean }> = [];
  onMessage?: (message: amqp.ConsumeMessage | null) => void;
  prefetch = async () => undefined;
  assertExchange = async () => undefined;
  assertQueue = async () => undefined;
  bindQueue = async () => undefined;
  cancel = async () => undefined;
  /** Closed by the subscriber (giving unsettled messages back): the broker would deliver them again. */
  closed = false;
  close = async () => {
    this.closed = true;
  };

  async consume(_queue: string, onMessage: (message: amqp.ConsumeMessage | null) => void) {
    this.onMessage = onMessage;
    return { consumerTag: 'tag' };
  }

  ack(message: amqp.Message): void {
    this.acks.push(message.fields.deliveryTag);
  }

  nack(message: amqp.Message, _allUpTo: boolean, requeue: boolean): void {
    this.nacks.push({ tag: message.fields.deliveryTag, requeue });
  }

  deliver(tag: number, key: string): void {
    this.onMessage?.({
      content: Buffer.from('{}'),
      fields: { deliveryTag: tag, redelivered: false, exchange: DESTINATION, routingKey: 'OrderPlaced' },
      properties: { headers: { [MessageHeaders.KEY]: key } },
    } as unknown as amqp.ConsumeMessage);
  }
}

/** What the pipeline answers for one message, and how long its batch takes (ms of fake time). */
interface Answer {
  readonly settlement: 'ACK' | 'DROP' | 'LEAVE';
  readonly takesMs: number;
}

interface Scenario {
  /** Messages in arrival order: their key, and the time before the next one arrives. */
  readonly messages: ReadonlyArray<{ readonly key: string; readonly gapMs: number }>;
  readonly answers: readonly Answer[];
  readonly concurrency: number;
  /** The subscriber stops after this much fake time (undefined: once everything is handled). */
  readonly stopAtMs: number | undefined;
}

const scenarios: fc.Arbitrary<Scenario> = fc.record({
  messages: fc.array(
    fc.record({ key: fc.constantFrom('a', 'b', 'c', 'd'), gapMs: fc.integer({ min: 0, max: 20 }) }),
    { minLength: 1, maxLength: 25 },
  ),
  answers: fc.array(
    fc.record({
      settlement: fc.constantFrom('ACK' as const, 'ACK' as const, 'DROP' as const, 'LEAVE' as const),
      takesMs: fc.integer({ min: 0, max: 30 }),
    }),
    { maxLength: 25 },
  ),
  concurrency: fc.integer({ min: 1, max: 4 }),
  stopAtMs: fc.option(fc.integer({ min: 0, max: 300 }), { nil: undefined }),
});

/**
 * The RabbitMQ subscriber applies the pipeline's settlements, through its public surface only
 * (start, the channel's deliveries, stop), over random arrivals, keys, batch answers and stop moments.
 */
describe(`${RabbitSubscriber.name} (properties)`, () => {
  useQuietWarnings();

  it("acks exactly what the pipeline answered ACK, once; never requeues; hands a key's messages over one batch at a time, in order", async () => {
    await fc.assert(
      fc.asyncProperty(scenarios, async (scenario) => {
        const clock = new FakeClock();
        const channel = new RecordingChannel();
        const connection = {
          get: async () => ({ createChannel: async () => channel }),
          onLost: () => () => undefined,
        } as unknown as RabbitConnection;
        const keyOf = new Map<number, string>();
        const answered = new Map<number, Settlement['kind']>();
        const handedOver: number[] = [];
        const running = new Set<string>();
        const overlaps: string[] = [];
        let stopping = false;
        const handedAfterStop: number[] = [];
        const answers = [...scenario.answers];
        const subscription: Subscription = {
          group: 'billing',
          destinations: [DESTINATION],
          retryTiers: {},
          concurrency: scenario.concurrency,
          onDeliveries: async (deliveries: readonly Delivery[]) => {
            const tags = deliveries.map((d) => d.origin.deliveryTag as number);
            if (stopping) handedAfterStop.push(...tags);
            handedOver.push(...tags);
            const keys = new Set(tags.map((tag) => keyOf.get(tag) as string));
            for (const key of keys) if (running.has(key)) overlaps.push(key);
            keys.forEach((key) => running.add(key));
            const answer = answers.shift() ?? { settlement: 'ACK', takesMs: 0 };
            await clock.sleep(answer.takesMs);
            keys.forEach((key) => running.delete(key));
            // As the pipeline: after a LEAVE, the rest of the batch is LEAVE too.
            const settlements: Settlement[] = [];
            for (const [i, tag] of tags.entries()) {
              const left = settlements.at(-1)?.kind === 'LEAVE';
              const kind = left ? 'LEAVE' : i === 0 ? answer.settlement : 'ACK';
              answered.set(tag, kind);
              settlements.push({ kind });
            }
            return settlements;
          },
        };
        const subscriber = new RabbitSubscriber(
          {
            connection,
            prefetch: 256,
            log: new Logger('test'),
            clock,
            topology: 'verify',
            withQueueTypes: (t) => t,
          },
          subscription,
        );
        await subscriber.start();

        let elapsed = 0;
        let stopped: Promise<void> | undefined;
        const stopIfDue = () => {
          if (stopped || scenario.stopAtMs === undefined || elapsed < scenario.stopAtMs) return;
          stopping = true;
          stopped = subscriber.stop();
        };
        for (const [i, { key, gapMs }] of scenario.messages.entries()) {
          stopIfDue();
          if (stopping || channel.closed) break;
          const tag = i + 1;
          keyOf.set(tag, key);
          channel.deliver(tag, key);
          await clock.advance(gapMs);
          elapsed += gapMs;
        }
        // A closed channel's messages not handed over yet are the broker's again (it redelivers them); a
        // LEAVE is given back after a pause.
        const busy = () =>
          answered.size < handedOver.length ||
          (!stopping && !channel.closed && handedOver.length < keyOf.size) ||
          (!stopping && !channel.closed && [...answered.values()].includes('LEAVE'));
        for (let tick = 0; tick < 1_000 && busy(); tick++) {
          await clock.advance(10);
          elapsed += 10;
          stopIfDue();
        }
        // Every message arrived before the stop was handed over and answered.
        expect(busy()).toBe(false);
        const givenBack = channel.closed; // before the stop, which closes the channel too
        stopping = true;
        stopped ??= subscriber.stop();
        await clock.advance(100);
        await stopped;

        // Never a requeue (a hot loop); never an ack and a nack, nor two of either, for one message.
        expect(channel.nacks.filter((n) => n.requeue)).toEqual([]);
        const settledTags = [...channel.acks, ...channel.nacks.map((n) => n.tag)];
        expect(new Set(settledTags).size).toBe(settledTags.length);
        // Acked exactly when the pipeline said ACK, nacked exactly on DROP; LEAVE stays unacked.
        for (const tag of keyOf.keys()) {
          const kind = answered.get(tag);
          expect({ tag, acked: channel.acks.includes(tag) }).toEqual({ tag, acked: kind === 'ACK' });
          expect({ tag, nacked: channel.nacks.some((n) => n.tag === tag) }).toEqual({
            tag,
            nacked: kind === 'DROP',
          });
        }
        // Each message handed over once; a key's messages one batch at a time, in arrival order.
        expect(new Set(handedOver).size).toBe(handedOver.length);
        expect(overlaps).toEqual([]);
        for (const key of new Set(keyOf.values())) {
          const ofKey = handedOver.filter((tag) => keyOf.get(tag) === key);
          expect(ofKey).toEqual([...ofKey].sort((x, y) => x - y));
        }
        // Once stopping, nothing more is handed over (it stays unacked; closing the channel returns it).
        expect(handedAfterStop).toEqual([]);
        // Never stuck: a LEAVE while the subscriber runs gives its channel's unacked messages back (closes it).
        if (scenario.stopAtMs === undefined && [...answered.values()].includes('LEAVE')) {
          expect(givenBack).toBe(true);
        }
      }),
      { numRuns: 150 },
    );
  }, 60_000);
});
