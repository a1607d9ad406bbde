import { Logger } from '@nestjs/common';
import { z } from 'zod';
import { FakeClock } from '../common/fake-clock';
import { defineEvent } from '../envelope/event-definition';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { resolveMessagingOptions } from '../options/resolve-messaging-options';
import { RetryMode, RetryOrdering, RetryPolicyOptions } from '../retry/retry-policy.interface';
import { resolveRetryPolicy } from '../retry/retry-policy';
import { MessageTransport } from '../transports/message-transport.interface';
import { ConsumerHandle, Subscription } from '../transports/delivery-contract';
import { ConsumerOrchestrator } from './consumer-orchestrator';
import { DeliveryPipeline } from './delivery-pipeline';
import { HandlerRegistry } from './handler-registry';
import { useQuietWarnings } from '../../spec-support/quiet-warnings';

const OrderPlaced = defineEvent({
  type: 'OrderPlaced',
  destination: 'orders',
  schema: z.object({ orderId: z.number() }),
  key: (order) => order.orderId,
});

/** A broker that refuses the first `failures` subscribes. */
class FakeTransport {
  readonly kind = 'kafka';
  readonly capabilities = { orderedStream: true, delayedDelivery: false, retryDestinations: true };
  readonly subscriptions: Subscription[] = [];
  readonly stopped: string[] = [];
  attempts = 0;
  /** Resolves the consumers' joins, when `joins` was set: until then they are joining. */
  join?: () => void;

  constructor(
    private failures = 0,
    private readonly joins = false,
  ) {}

  async subscribe(subscription: Subscription): Promise<ConsumerHandle> {
    this.attempts += 1;
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('broker down');
    }
    this.subscriptions.push(subscription);
    const joined = this.joins ? new Promise<void>((resolve) => (this.join = resolve)) : undefined;
    return { joined, stop: async () => void this.stopped.push(subscription.group) };
  }
}

function orchestrator(
  transport: FakeTransport,
  clock: FakeClock,
  retryDefaults?: Record<string, RetryPolicyOptions>,
) {
  const registry = new HandlerRegistry();
  registry.add({
    group: 'billing',
    event: OrderPlaced,
    name: 'Billing.onOrderPlaced',
    policy: resolveRetryPolicy({
      maxAttempts: 4,
      mode: RetryMode.RETRY_DESTINATION,
      ordering: RetryOrdering.ALLOW_REORDER,
      backoff: { initialDelayMs: 100, multiplier: 2, maxDelayMs: 400 },
    }),
    invoke: async () => undefined,
  });
  const pipeline = { stop: jest.fn(), resume: jest.fn() } as unknown as DeliveryPipeline;
  const options = resolveMessagingOptions({
    serviceName: 'unit',
    transport: { kind: 'kafka', brokers: ['127.0.0.1:9092'] },
    retryDefaults,
  });
  return new ConsumerOrchestrator(
    registry,
    pipeline,
    transport as unknown as MessageTransport,
    options,
    new MessagingMetrics(),
    clock,
  );
}

describe(ConsumerOrchestrator.name, () => {
  useQuietWarnings();
  let clock: FakeClock;
  beforeEach(() => {
    clock = new FakeClock();
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });

  describe('start', () => {
    it('subscribes each group with the retry tiers its policies need', async () => {
      const transport = new FakeTransport();
      await orchestrator(transport, clock).start();
      expect(transport.subscriptions.map((s) => [s.group, s.destinations, s.retryTiers])).toEqual([
        ['billing', ['orders'], { orders: [100, 200, 400] }],
      ]);
    });

    it("subscribes the retry tiers of the destination's default too", async () => {
      const transport = new FakeTransport();
      await orchestrator(transport, clock, {
        orders: {
          maxAttempts: 3,
          mode: RetryMode.RETRY_DESTINATION,
          ordering: RetryOrdering.ALLOW_REORDER,
          backoff: { initialDelayMs: 1_000, multiplier: 3, maxDelayMs: 10_000 },
        },
      }).start();
      expect(transport.subscriptions[0].retryTiers).toEqual({ orders: [100, 200, 400, 1_000, 3_000] });
    });

    it('subscribes again in the background, with backoff, while the broker refuses', async () => {
      const transport = new FakeTransport(2);
      const consumers = orchestrator(transport, clock);
      await consumers.start();
      expect(transport.attempts).toBe(1);
      expect(consumers.runningGroups()).toEqual([]);
      await clock.advance(499); // 1000 ms × 0.5
      expect(transport.attempts).toBe(1);
      await clock.advance(1);
      expect(transport.attempts).toBe(2);
      await clock.advance(1_000); // 2000 ms × 0.5
      expect(transport.attempts).toBe(3);
      expect(consumers.runningGroups()).toEqual(['billing']);
    });

    it('returns before the consumers have joined; they count as joining until then (issue 37, 2)', async () => {
      const transport = new FakeTransport(0, true);
      const consumers = orchestrator(transport, clock);
      expect(consumers.joiningGroups()).toEqual([]); // not started
      await consumers.start();
      expect(consumers.runningGroups()).toEqual([]);
      expect(consumers.joiningGroups()).toEqual(['billing']);
      transport.join?.();
      await clock.advance(0);
      expect(consumers.runningGroups()).toEqual(['billing']);
      expect(consumers.joiningGroups()).toEqual([]);
      await consumers.stop();
      expect(consumers.joiningGroups()).toEqual([]);
    });

    it('counts a group subscribing again after a failure as joining', async () => {
      const consumers = orchestrator(new FakeTransport(1), clock);
      await consumers.start();
      expect(consumers.joiningGroups()).toEqual(['billing']);
      await clock.advance(1_000);
      expect(consumers.joiningGroups()).toEqual([]);
    });
  });

  describe('stop', () => {
    it('cancels a pending subscribe and stops the running subscriptions', async () => {
      const transport = new FakeTransport(1);
      const consumers = orchestrator(transport, clock);
      await consumers.start();
      await consumers.stop();
      await clock.advance(60_000);
      expect(transport.attempts).toBe(1);

      const running = orchestrator(new FakeTransport(), clock);
      await running.start();
      await running.stop();
      expect(running.runningGroups()).toEqual([]);
    });
  });
});
