import { z } from 'zod';
import { systemClock } from '../common/clock';
import { encodeEnvelope } from '../envelope/envelope-codec';
import { defineEvent } from '../envelope/event-definition';
import { MessageHeaders } from '../envelope/message-headers';
import { newMessageId } from '../envelope/message-id';
import { WireMessage } from '../envelope/wire-message';
import { InboxDelivery, InboxOutcome, InboxService } from '../inbox/inbox.service';
import { MessageTracing } from '../observability/message-tracing';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { resolveMessagingOptions } from '../options/resolve-messaging-options';
import { RetryPolicyOptions, RetryMode, RetryOrdering } from '../retry/retry-policy.interface';
import { resolveRetryPolicy } from '../retry/retry-policy';
import { MessageTransport } from '../transports/message-transport.interface';
import { PublishOutcome } from '../transports/publish-outcome';
import { Delivery, DeliveryControl, Settlement } from '../transports/subscription.interface';
import { TransportCapabilities } from '../transports/transport-capabilities';
import { DeliveryPipeline } from './delivery-pipeline';
import { FailureSettler } from './failure-settler';
import { HandlerRegistry } from './handler-registry';
import { MessageContext } from './message-context';
import { useFakeTime } from '../../spec-support/fake-time';

const KAFKA: TransportCapabilities = { orderedStream: true, delayedDelivery: false, retryDestinations: true };
const RABBITMQ: TransportCapabilities = {
  orderedStream: false,
  delayedDelivery: true,
  retryDestinations: false,
};
const GROUP = 'billing';
const DESTINATION = 'orders';
const FAST = { initialDelayMs: 1_000, multiplier: 2, maxDelayMs: 8_000 };

const OrderPlaced = defineEvent({
  type: 'OrderPlaced',
  destination: DESTINATION,
  schema: z.object({ orderId: z.number().int(), customer: z.string() }),
  key: (order) => order.customer,
});

/** A transient failure, as a flaky downstream throws it. */
class Flaky extends Error {
  readonly retriable = true;
}

/** A message for `OrderPlaced` as the relay puts it on the wire. */
function orderWire(
  payload: object = { orderId: 1, customer: 'c1' },
  headers: Record<string, string> = {},
  destination = DESTINATION,
  type = 'OrderPlaced',
) {
  const wire = encodeEnvelope(
    {
      messageId: newMessageId(),
      type,
      destination,
      key: 'c1',
      occurredAt: new Date(),
      headers: {},
    },
    JSON.stringify(payload),
  );
  return { ...wire, headers: { ...wire.headers, ...headers } };
}

interface HarnessOptions {
  readonly capabilities?: TransportCapabilities;
  readonly policy?: RetryPolicyOptions;
  readonly retryDefaults?: Record<string, RetryPolicyOptions>;
  /** Fails the handler while this returns true (given the attempt). */
  readonly failWhile?: (attempt: number) => boolean;
  /** What the handler throws; default a transient failure. */
  readonly error?: () => Error;
  /** The inbox (and its attempt counts); a fresh one by default. */
  readonly inbox?: FakeInbox;
  /** `consumers.batchSize`. */
  readonly batchSize?: number;
}

/** The inbox in memory: handled ids and the failed attempts of messages retried in place. */
class FakeInbox {
  readonly handled = new Set<string>();
  /** Ids as their transactions committed, in order (twice if committed twice). */
  readonly applied: string[] = [];
  readonly failed = new Map<string, number>();
  /** Batch transactions committed (or tried), and rolled back. */
  commits = 0;
  rollbacks = 0;
  /** The next commits that fail (the connection dropped). */
  failCommits = 0;
  /** The next batches that cannot begin (the database is away). */
  failBegins = 0;
  /** The ids of each batch begun. */
  readonly batches: string[][] = [];

  async begin(deliveries: readonly InboxDelivery[]): Promise<FakeBatch> {
    if (this.failBegins > 0) {
      this.failBegins -= 1;
      throw new Error('connection refused');
    }
    const ids = deliveries.map((d) => d.envelope.messageId);
    if (new Set(ids).size !== ids.length) throw new Error('an inbox batch holds each message once');
    this.batches.push(ids);
    return new FakeBatch(this, ids);
  }

  async runOnce(
    delivery: InboxDelivery,
    work: (scope: { manager: never }, failedBefore: number) => Promise<void>,
  ): Promise<InboxOutcome> {
    const id = delivery.envelope.messageId;
    if (this.handled.has(id)) return 'DUPLICATE';
    await work({ manager: undefined as never }, this.failed.get(id) ?? 0);
    this.handled.add(id);
    this.applied.push(id);
    this.failed.delete(id);
    return 'HANDLED';
  }

  async recordFailedAttempt(delivery: InboxDelivery, attempt: number): Promise<void> {
    this.failed.set(delivery.envelope.messageId, attempt);
  }

  async forgetFailedAttempts(delivery: InboxDelivery): Promise<void> {
    this.failed.delete(delivery.envelope.messageId);
  }
}

/** A batch transaction in memory: what its deliveries handled becomes `handled` at the commit. */
class FakeBatch {
  readonly staged: string[] = [];

  constructor(
    private readonly inbox: FakeInbox,
    private readonly ids: readonly string[],
  ) {}

  async run(
    index: number,
    work: (scope: { manager: never }, failedBefore: number) => Promise<void>,
  ): Promise<InboxOutcome> {
    const id = this.ids[index];
    if (this.inbox.handled.has(id)) return 'DUPLICATE';
    // The manager tells the transaction: one per batch.
    await work({ manager: this as never }, this.inbox.failed.get(id) ?? 0);
    this.staged.push(id);
    return 'HANDLED';
  }

  async commit(): Promise<void> {
    this.inbox.commits += 1;
    if (this.inbox.failCommits > 0) {
      this.inbox.failCommits -= 1;
      throw new Error('connection lost');
    }
    for (const id of this.staged) {
      this.inbox.handled.add(id);
      this.inbox.applied.push(id);
      this.inbox.failed.delete(id);
    }
  }

  async rollback(): Promise<void> {
    this.inbox.rollbacks += 1;
    this.staged.length = 0;
  }
}

/** A pipeline over a fake transport and inbox; the test scripts what the broker answers to copies. */
class Harness {
  readonly registry = new HandlerRegistry();
  readonly calls: MessageContext[] = [];
  /** Called on each handler call (before it fails or not). */
  onCall?: (context: MessageContext) => void;
  readonly transport: MessageTransport;
  readonly copies: WireMessage[] = [];
  /** What the broker answers to each copy, in turn; CONFIRMED once the script runs out. */
  readonly answers: Array<PublishOutcome['status']> = [];
  keepAlives = 0;
  stopping = false;
  readonly pipeline: DeliveryPipeline;
  readonly control: DeliveryControl = {
    keepAlive: async () => void (this.keepAlives += 1),
    isStopping: () => this.stopping,
  };

  constructor(options: HarnessOptions = {}) {
    const transport = (this.transport = {
      kind: options.capabilities === RABBITMQ ? 'rabbitmq' : 'kafka',
      capabilities: options.capabilities ?? KAFKA,
      publishCopies: async (copies: readonly WireMessage[]): Promise<PublishOutcome[]> =>
        copies.map((copy) => {
          this.copies.push(copy);
          const status = this.answers.shift() ?? 'CONFIRMED';
          return status === 'CONFIRMED' ? { status } : { status, error: new Error('refused') };
        }),
    } as unknown as MessageTransport);
    const inbox = (options.inbox ?? new FakeInbox()) as unknown as InboxService;
    const resolved = resolveMessagingOptions({
      serviceName: 'unit',
      transport: { kind: 'kafka', brokers: ['127.0.0.1:9092'] },
      retryDefaults: options.retryDefaults,
      consumers: { batchSize: options.batchSize },
      deadLetter: { keySecret: Buffer.alloc(32, 7).toString('base64') },
    });
    this.registry.add({
      group: GROUP,
      event: OrderPlaced,
      policy: options.policy && resolveRetryPolicy(options.policy),
      name: 'Orders.onOrderPlaced',
      invoke: async (_payload, context) => {
        this.calls.push(context);
        this.onCall?.(context);
        if (options.failWhile?.(context.attempt)) throw options.error?.() ?? new Flaky('downstream flaked');
      },
    });
    const metrics = new MessagingMetrics();
    this.pipeline = new DeliveryPipeline(
      this.registry,
      inbox,
      new FailureSettler(transport, metrics, systemClock, resolved),
      transport,
      resolved,
      metrics,
      new MessageTracing(),
      systemClock,
    );
  }

  handleBatch(wires: readonly WireMessage[]): Promise<Settlement[]> {
    const deliveries = wires.map((wire): Delivery => ({ wire, origin: { source: wire.destination } }));
    return this.pipeline.handleBatch(GROUP, deliveries, this.control);
  }

  handle(wire: WireMessage, retryTierMs?: number): Promise<Settlement> {
    const delivery: Delivery = { wire, origin: { source: wire.destination, retryTierMs } };
    return this.pipeline.handle(GROUP, delivery, this.control);
  }
}

/** Runs `work` to its end while time passes in steps of `stepMs`. */
async function withTimePassing<T>(work: Promise<T>, stepMs = 100): Promise<T> {
  let done = false;
  const result = work.finally(() => (done = true));
  while (!done) await jest.advanceTimersByTimeAsync(stepMs);
  return result;
}

describe(DeliveryPipeline.name, () => {
  useFakeTime();

  describe('handle', () => {
    it('runs the handler once and answers ACK', async () => {
      const harness = new Harness();
      await expect(harness.handle(orderWire())).resolves.toEqual({ kind: 'ACK' });
      expect(harness.calls.map((c) => c.attempt)).toEqual([1]);
      expect(harness.copies).toEqual([]);
    });
  });

  describe('handleBatch', () => {
    const ACK = { kind: 'ACK' };
    const orders = (n: number) =>
      Array.from({ length: n }, (_, i) => orderWire({ orderId: i + 1, customer: 'c1' }));
    const ids = (wires: readonly WireMessage[]) => wires.map((w) => w.headers[MessageHeaders.ID]);
    const orderIds = (calls: readonly MessageContext[]) =>
      calls.map((c) => `${(c as unknown as { messageId: string }).messageId}@${c.attempt}`);

    /** A harness whose handler fails the second of `wires` on its first attempt (retried inline). */
    const secondFailsOnce = (inbox: FakeInbox, wires: readonly WireMessage[], batchSize?: number) => {
      const harness = new Harness({
        inbox,
        batchSize,
        policy: {
          maxAttempts: 3,
          mode: RetryMode.INLINE,
          ordering: RetryOrdering.ALLOW_REORDER,
          backoff: FAST,
        },
      });
      const failing = wires[1].headers[MessageHeaders.ID];
      harness.onCall = (context) => {
        if (context.messageId === failing && context.attempt === 1) throw new Flaky('downstream flaked');
      };
      return { harness, failing };
    };

    it('runs consecutive deliveries in one transaction and answers ACK once it committed', async () => {
      const inbox = new FakeInbox();
      const harness = new Harness({ inbox });
      const wires = orders(3);
      await expect(harness.handleBatch(wires)).resolves.toEqual([ACK, ACK, ACK]);
      expect(inbox.commits).toBe(1);
      expect(new Set(harness.calls.map((c) => c.manager)).size).toBe(1);
      expect([...inbox.handled]).toEqual(ids(wires));
    });

    it('rolls the batch back at a failing delivery, commits the ones before it again, retries it alone, then goes on', async () => {
      const inbox = new FakeInbox();
      const wires = orders(4);
      const { harness, failing } = secondFailsOnce(inbox, wires);
      const settled = await withTimePassing(harness.handleBatch(wires));

      expect(settled).toEqual([ACK, ACK, ACK, ACK]);
      const [first, second, firstAgain, retried, third, fourth] = harness.calls;
      expect(orderIds(harness.calls)).toEqual([
        `${ids(wires)[0]}@1`,
        `${failing}@1`,
        `${ids(wires)[0]}@1`,
        `${failing}@2`,
        `${ids(wires)[2]}@1`,
        `${ids(wires)[3]}@1`,
      ]);
      // The first batch rolled back whole; the first delivery again in a batch of its own; the retry alone
      // (runOnce); the rest in a batch of their own.
      expect(first.manager).toBe(second.manager);
      expect(firstAgain.manager).not.toBe(first.manager);
      expect(retried.manager).toBeUndefined();
      expect(third.manager).toBe(fourth.manager);
      expect(third.manager).not.toBe(firstAgain.manager);
      expect(inbox.rollbacks).toBe(1);
      expect(inbox.commits).toBe(2);
      // Each applied once, in order.
      expect(inbox.applied).toEqual(ids(wires));
    });

    it('with batchSize 1, handles each delivery in a transaction of its own: a failure runs no other handler again', async () => {
      const inbox = new FakeInbox();
      const wires = orders(3);
      const { harness, failing } = secondFailsOnce(inbox, wires, 1);
      await expect(withTimePassing(harness.handleBatch(wires))).resolves.toEqual([ACK, ACK, ACK]);
      expect(orderIds(harness.calls)).toEqual([
        `${ids(wires)[0]}@1`,
        `${failing}@1`,
        `${failing}@2`,
        `${ids(wires)[2]}@1`,
      ]);
      expect(inbox.batches).toEqual([[ids(wires)[0]], [failing], [ids(wires)[2]]]);
      expect(inbox.applied).toEqual(ids(wires));
    });

    it('splits a lane into batches of consumers.batchSize', async () => {
      const inbox = new FakeInbox();
      const harness = new Harness({ inbox, batchSize: 2 });
      const wires = orders(5);
      await harness.handleBatch(wires);
      expect(inbox.batches.map((b) => b.length)).toEqual([2, 2, 1]);
      expect(inbox.commits).toBe(3);
    });

    it('records a batch in the inbox once, before its handlers: one batch of distinct messages', async () => {
      const inbox = new FakeInbox();
      const harness = new Harness({ inbox });
      const wires = orders(3);
      await harness.handleBatch(wires);
      expect(inbox.batches).toEqual([ids(wires)]);
    });

    it('takes the same message twice in a lane into the next batch, where it is a duplicate', async () => {
      const inbox = new FakeInbox();
      const harness = new Harness({ inbox });
      const [a, b] = orders(2);
      await expect(harness.handleBatch([a, b, a])).resolves.toEqual([ACK, ACK, ACK]);
      expect(inbox.batches).toEqual([ids([a, b]), ids([a])]);
      expect(harness.calls).toHaveLength(2);
      expect(inbox.applied).toEqual(ids([a, b]));
    });

    it('handles each delivery again alone when the batch does not commit, and answers ACK only then', async () => {
      const inbox = new FakeInbox();
      inbox.failCommits = 1;
      const harness = new Harness({ inbox });
      const wires = orders(3);
      await expect(harness.handleBatch(wires)).resolves.toEqual([ACK, ACK, ACK]);
      // Three tries in the lost batch, three again alone (each in its own transaction: runOnce).
      expect(harness.calls).toHaveLength(6);
      expect(inbox.applied).toEqual(ids(wires));
    });

    it('handles each delivery alone when the batch cannot begin', async () => {
      const inbox = new FakeInbox();
      inbox.failBegins = 1;
      const harness = new Harness({ inbox });
      const wires = orders(3);
      await expect(harness.handleBatch(wires)).resolves.toEqual([ACK, ACK, ACK]);
      expect(harness.calls.map((c) => c.manager)).toEqual([undefined, undefined, undefined]);
      expect(inbox.applied).toEqual(ids(wires));
    });

    it('leaves the deliveries after a PAUSE unsettled (Kafka: they come again after the rewind)', async () => {
      const inbox = new FakeInbox();
      const wires = orders(3);
      const harness = new Harness({
        inbox,
        policy: { maxAttempts: 3, mode: RetryMode.PAUSE_PARTITION, backoff: FAST },
      });
      harness.onCall = (context) => {
        if (context.messageId === wires[1].headers[MessageHeaders.ID]) throw new Flaky('downstream flaked');
      };
      const settled = await harness.handleBatch(wires);
      expect(settled.map((s) => s.kind)).toEqual(['ACK', 'PAUSE', 'LEAVE']);
      expect([...inbox.handled]).toEqual([ids(wires)[0]]);
    });
  });

  describe('inline retries', () => {
    const inline = { maxAttempts: 3, mode: RetryMode.INLINE, ordering: RetryOrdering.ALLOW_REORDER };

    it('waits the jittered backoff on the clock before calling the handler again', async () => {
      const harness = new Harness({ policy: { ...inline, backoff: FAST }, failWhile: (a) => a < 2 });
      const settled = harness.handle(orderWire());
      await jest.advanceTimersByTimeAsync(0);
      expect(harness.calls).toHaveLength(1);
      // Full jitter with random() = 0.5 over [0, 1000]: 500 ms.
      await jest.advanceTimersByTimeAsync(499);
      expect(harness.calls).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(1);
      await expect(settled).resolves.toEqual({ kind: 'ACK' });
      expect(harness.calls.map((c) => c.attempt)).toEqual([1, 2]);
    });

    it('keeps the consumer alive once a second during a long wait', async () => {
      const backoff = { initialDelayMs: 10_000, multiplier: 2, maxDelayMs: 10_000 };
      const harness = new Harness({ policy: { ...inline, backoff }, failWhile: (a) => a < 2 });
      const settled = harness.handle(orderWire());
      await jest.advanceTimersByTimeAsync(5_000); // a 5000 ms wait
      await expect(settled).resolves.toEqual({ kind: 'ACK' });
      expect(harness.keepAlives).toBe(5);
    });

    it('leaves the delivery unsettled when the consumer stops during the wait', async () => {
      const harness = new Harness({ policy: { ...inline, backoff: FAST }, failWhile: () => true });
      const settled = harness.handle(orderWire());
      await jest.advanceTimersByTimeAsync(0);
      harness.pipeline.stop();
      await jest.advanceTimersByTimeAsync(1_000);
      await expect(settled).resolves.toEqual({ kind: 'LEAVE' });
      expect(harness.calls).toHaveLength(1);
    });
  });

  describe('attempts retried in place', () => {
    const pause = { maxAttempts: 3, mode: RetryMode.PAUSE_PARTITION, backoff: FAST };

    it('are counted in the inbox, so that another consumer (after a restart) goes on from there', async () => {
      const inbox = new FakeInbox();
      const wire = orderWire();
      const first = new Harness({ policy: pause, failWhile: () => true, inbox });
      await expect(first.handle(wire)).resolves.toEqual({ kind: 'PAUSE', delayMs: 500 });
      await expect(first.handle(wire)).resolves.toEqual({ kind: 'PAUSE', delayMs: 1_000 });

      const restarted = new Harness({ policy: pause, failWhile: () => true, inbox });
      await expect(restarted.handle(wire)).resolves.toEqual({ kind: 'ACK' });
      expect(restarted.calls.map((c) => c.attempt)).toEqual([3]);
      expect(restarted.copies[0].headers[MessageHeaders.RETRY_ATTEMPT]).toBe('3');
      expect(inbox.failed.size).toBe(0);
    });

    it('count inline retries too', async () => {
      const inbox = new FakeInbox();
      const inline = { ...pause, mode: RetryMode.INLINE, ordering: RetryOrdering.ALLOW_REORDER };
      const harness = new Harness({ policy: inline, failWhile: () => true, inbox });
      const wire = orderWire();
      const settled = harness.handle(wire);
      await jest.advanceTimersByTimeAsync(0);
      expect(inbox.failed.get(wire.headers[MessageHeaders.ID])).toBe(1);
      harness.pipeline.stop(); // the consumer stops during the wait: the count stays
      await jest.advanceTimersByTimeAsync(1_000);
      await expect(settled).resolves.toEqual({ kind: 'LEAVE' });
      expect(inbox.failed.get(wire.headers[MessageHeaders.ID])).toBe(1);
    });

    it('ignore a msg.retry-attempt on a message of the destination itself', async () => {
      const harness = new Harness({ policy: pause, failWhile: () => true });
      const forged = orderWire(undefined, { [MessageHeaders.RETRY_ATTEMPT]: '99' });
      await expect(harness.handle(forged)).resolves.toEqual({ kind: 'PAUSE', delayMs: 500 });
      expect(harness.calls.map((c) => c.attempt)).toEqual([1]);

      const retried = orderWire(undefined, { [MessageHeaders.RETRY_ATTEMPT]: '1' });
      await harness.handle(retried, 1_000);
      expect(harness.calls.map((c) => c.attempt)).toEqual([1, 2]);
    });
  });

  describe('BROKER_DELAYED on RabbitMQ (one TTL queue per delay tier)', () => {
    /**
     * RabbitMQ in miniature: a copy published to a retry queue comes back to the consumer when the queue's
     * TTL expires (the tier in its name), marked with that tier, as the subscriber marks it.
     */
    function runWithTtlQueues(harness: Harness): void {
      const publish = harness.transport.publishCopies.bind(harness.transport);
      harness.transport.publishCopies = async (copies) => {
        const outcomes = await publish(copies);
        for (const copy of copies) {
          const tier = /\.retry\.(\d+)ms$/.exec(copy.destination);
          if (!tier) continue;
          const back = { ...copy, destination: DESTINATION };
          setTimeout(() => void harness.handle(back, Number(tier[1])), Number(tier[1]));
        }
        return outcomes;
      };
    }

    /** A uniform source in [0, 1) of its own seed, so that the run is the same every time. */
    function seeded(seed: number): () => number {
      let state = seed;
      return () => {
        state = (state + 0x6d2b79f5) | 0;
        let t = Math.imul(state ^ (state >>> 15), 1 | state);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
      };
    }

    it('keeps full jitter: first retries spread uniformly over [0, initialDelay], not all at one tier', async () => {
      const MESSAGES = 2_000;
      jest.spyOn(Math, 'random').mockImplementation(seeded(7));
      const policy = { maxAttempts: 3, mode: RetryMode.BROKER_DELAYED, backoff: FAST }; // 1000, 2000, 4000
      const failedAt = new Map<string, number>();
      const waited: number[] = [];
      const harness = new Harness({ capabilities: RABBITMQ, policy, failWhile: (attempt) => attempt < 2 });
      harness.onCall = (context) => {
        if (context.attempt === 1) failedAt.set(context.messageId, Date.now());
        else waited.push(Date.now() - failedAt.get(context.messageId)!);
      };
      runWithTtlQueues(harness);

      for (let i = 0; i < MESSAGES; i++) void harness.handle(orderWire({ orderId: i, customer: `c${i}` }));
      while (waited.length < MESSAGES) await jest.advanceTimersByTimeAsync(50);

      // Ten buckets of 100 ms: each holds about a tenth of the retries (uniform), none all of them.
      const buckets = Array.from({ length: 10 }, (_, b) =>
        waited.filter((w) => Math.min(9, Math.floor(w / 100)) === b),
      );
      for (const bucket of buckets) expect(Math.abs(bucket.length / MESSAGES - 0.1)).toBeLessThan(0.025);
      expect(Math.max(...waited)).toBeLessThanOrEqual(1_000);
      // Each message came back when its own jittered delay was up: the delay drawn is the delay waited.
      expect(new Set(waited).size).toBeGreaterThan(500);
    });
  });

  describe('dead-lettering', () => {
    it('publishes the copy to the group dead-letter destination, then answers ACK', async () => {
      const harness = new Harness({ failWhile: () => true });
      await expect(harness.handle(orderWire())).resolves.toEqual({ kind: 'ACK' });
      expect(harness.copies.map((c) => c.destination)).toEqual([`${DESTINATION}.${GROUP}.dlq`]);
      expect(harness.copies[0].headers[MessageHeaders.FAILURE_CATEGORY]).toBe('TRANSIENT');
    });

    it('tries a refused copy again after the republish backoff and answers ACK only once it is confirmed', async () => {
      const harness = new Harness({ failWhile: () => true });
      harness.answers.push('REJECTED', 'AMBIGUOUS');
      let settlement: Settlement | undefined;
      void harness.handle(orderWire()).then((s) => (settlement = s));
      await jest.advanceTimersByTimeAsync(0);
      expect(harness.copies).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(100); // 200 ms × 0.5
      expect(harness.copies).toHaveLength(2);
      expect(settlement).toBeUndefined();
      await jest.advanceTimersByTimeAsync(200); // 400 ms × 0.5
      expect(harness.copies).toHaveLength(3);
      expect(settlement).toEqual({ kind: 'ACK' });
    });

    it('leaves the source unsettled when the consumer stops before the copy is confirmed', async () => {
      const harness = new Harness({ failWhile: () => true });
      harness.answers.push(...Array<'REJECTED'>(10).fill('REJECTED'));
      const settled = harness.handle(orderWire());
      await jest.advanceTimersByTimeAsync(0);
      harness.stopping = true;
      await expect(withTimePassing(settled)).resolves.toEqual({ kind: 'LEAVE' });
      expect(harness.copies).toHaveLength(1);
    });
  });

  describe('messages no handler can take', () => {
    const POLICIES: Array<[string, TransportCapabilities, RetryPolicyOptions]> = [
      ['Kafka PAUSE_PARTITION', KAFKA, { maxAttempts: 3, mode: RetryMode.PAUSE_PARTITION }],
      ['Kafka INLINE, PRESERVE', KAFKA, { maxAttempts: 3, mode: RetryMode.INLINE }],
      [
        'Kafka INLINE, ALLOW_REORDER',
        KAFKA,
        { maxAttempts: 3, mode: RetryMode.INLINE, ordering: RetryOrdering.ALLOW_REORDER },
      ],
      [
        'Kafka RETRY_DESTINATION, ALLOW_REORDER',
        KAFKA,
        { maxAttempts: 3, mode: RetryMode.RETRY_DESTINATION, ordering: RetryOrdering.ALLOW_REORDER },
      ],
      ['RabbitMQ INLINE', RABBITMQ, { maxAttempts: 3, mode: RetryMode.INLINE }],
      ['RabbitMQ BROKER_DELAYED', RABBITMQ, { maxAttempts: 3, mode: RetryMode.BROKER_DELAYED }],
    ];
    const BAD: Array<[string, (wire: WireMessage) => WireMessage, string]> = [
      ['a schema mismatch', () => orderWire({ orderId: 'one' }), 'SCHEMA_MISMATCH'],
      ['an unknown type', () => orderWire({}, {}, DESTINATION, 'OrderShipped'), 'UNKNOWN_TYPE'],
      ['an undecodable body', (wire) => ({ ...wire, body: Buffer.from('<xml/>') }), 'INVALID_JSON'],
    ];

    it.each(
      POLICIES.flatMap(([name, capabilities, policy]) =>
        BAD.map((bad) => [name, ...bad, capabilities, policy] as const),
      ),
    )('%s: dead-letters %s on its first delivery', async (_name, _what, make, code, capabilities, policy) => {
      const harness = new Harness({ capabilities, policy, retryDefaults: { [DESTINATION]: policy } });
      await expect(harness.handle(make(orderWire()))).resolves.toEqual({ kind: 'ACK' });
      expect(harness.copies.map((c) => c.destination)).toEqual([`${DESTINATION}.${GROUP}.dlq`]);
      expect(harness.copies[0].headers[MessageHeaders.FAILURE_CODE]).toBe(code);
      expect(harness.copies[0].headers[MessageHeaders.RETRY_ATTEMPT]).toBe('1');
      expect(harness.calls).toEqual([]);
    });

    it("drops it instead when the policy's onNonRetryable says REJECT", async () => {
      const policy = { maxAttempts: 3, mode: RetryMode.INLINE, onNonRetryable: 'REJECT' as const };
      const harness = new Harness({ policy });
      await expect(harness.handle(orderWire({ orderId: 'one' }))).resolves.toEqual({ kind: 'DROP' });
      expect(harness.copies).toEqual([]);
    });
  });

  describe('retry defaults', () => {
    it('finds no default for a destination named like an Object.prototype member', async () => {
      const harness = new Harness();
      const unknown = orderWire({}, {}, 'constructor', 'Unknown');
      await expect(harness.handle(unknown)).resolves.toEqual({ kind: 'ACK' });
      expect(harness.copies.map((c) => c.destination)).toEqual([`constructor.${GROUP}.dlq`]);
      expect(harness.copies[0].headers[MessageHeaders.FAILURE_CODE]).toBe('UNKNOWN_TYPE');
    });
  });

  describe('other decisions', () => {
    it('pauses in place on an ordered stream (Kafka) for the jittered delay', async () => {
      const policy = { maxAttempts: 3, mode: RetryMode.PAUSE_PARTITION, backoff: FAST };
      const harness = new Harness({ policy, failWhile: () => true });
      await expect(harness.handle(orderWire())).resolves.toEqual({ kind: 'PAUSE', delayMs: 500 });
      expect(harness.copies).toEqual([]);
    });

    it('publishes to the retry destination of the tier, due at now + delay', async () => {
      const policy = {
        maxAttempts: 3,
        mode: RetryMode.RETRY_DESTINATION,
        ordering: RetryOrdering.ALLOW_REORDER,
        backoff: FAST,
      };
      const harness = new Harness({ policy, failWhile: () => true });
      await expect(harness.handle(orderWire())).resolves.toEqual({ kind: 'ACK' });
      const [copy] = harness.copies;
      expect(copy.destination).toMatch(new RegExp(`^${DESTINATION}\\.${GROUP}\\.retry\\.\\d+ms$`));
      expect(copy.headers[MessageHeaders.RETRY_DUE_AT]).toBe('2026-12-01T00:00:00.500Z');
      expect(copy.headers[MessageHeaders.RETRY_ATTEMPT]).toBe('1');
    });

    it('drops a non-retryable failure without a copy when the policy says REJECT', async () => {
      const policy = {
        maxAttempts: 3,
        mode: RetryMode.INLINE,
        onNonRetryable: 'REJECT' as const,
      };
      const forbidden = () => Object.assign(new Error('permission denied'), { code: '42501' });
      const harness = new Harness({ policy, failWhile: () => true, error: forbidden });
      await expect(harness.handle(orderWire())).resolves.toEqual({ kind: 'DROP' });
      expect(harness.copies).toEqual([]);
    });
  });
});
