import { z } from 'zod';
import { defineEvent } from '../envelope/event-definition';
import { resolveMessagingOptions } from '../options/resolve-messaging-options';
import { resolveRetryPolicy } from '../retry/retry-policy';
import { RetryMode, RetryOrdering } from '../retry/retry-policy.interface';
import { TransportCapabilities } from '../retry/transport-capabilities';
import { HandlerRegistry } from './handler-registry';
import { describeFailurePath, summaryLines, summaryWarnings, withoutCredentials } from './startup-summary';

const KAFKA: TransportCapabilities = { orderedStream: true, delayedDelivery: false, retryDestinations: true };
const RABBIT: TransportCapabilities = {
  orderedStream: false,
  delayedDelivery: true,
  retryDestinations: false,
};
const OrderPlaced = defineEvent({
  type: 'OrderPlaced',
  destination: 'orders',
  schema: z.object({ id: z.number() }),
  key: (e) => e.id,
});

describe('StartupSummary', () => {
  describe(describeFailurePath.name, () => {
    it('says that INLINE on an ordered Kafka topic pauses instead, and how to change it', () => {
      const policy = resolveRetryPolicy({ maxAttempts: 3, mode: RetryMode.INLINE });
      const text = describeFailurePath({ policy }, KAFKA);
      expect(text).toContain('pause and retry in place');
      expect(text).toContain('mode INLINE is not used');
      expect(text).toContain('ALLOW_REORDER');
    });

    it('says INLINE where the transport runs it (RabbitMQ, or ALLOW_REORDER)', () => {
      const inline = resolveRetryPolicy({ maxAttempts: 3, mode: RetryMode.INLINE });
      expect(describeFailurePath({ policy: inline }, RABBIT)).toBe('up to 3 attempts, retried inline');
      const reorder = resolveRetryPolicy({
        maxAttempts: 3,
        mode: RetryMode.INLINE,
        ordering: RetryOrdering.ALLOW_REORDER,
      });
      expect(describeFailurePath({ policy: reorder }, KAFKA)).toBe('up to 3 attempts, retried inline');
    });

    it('names the dead-letter-at-once cases', () => {
      expect(describeFailurePath({}, KAFKA)).toContain('no retry policy');
      expect(
        describeFailurePath(
          { policy: resolveRetryPolicy({ maxAttempts: 1, mode: RetryMode.INLINE }) },
          RABBIT,
        ),
      ).toContain('maxAttempts 1');
    });
  });

  describe(summaryLines.name, () => {
    it('names the transport without its password, each handler with its failure path and its DLQ', () => {
      const options = resolveMessagingOptions({
        serviceName: 'shop',
        transport: { kind: 'rabbitmq', url: 'amqp://shop:s3cret@rabbit:5672/orders' },
      });
      const registry = new HandlerRegistry();
      registry.add({
        group: 'billing',
        event: OrderPlaced,
        name: 'BillingHandler.onOrderPlaced',
        invoke: () => Promise.resolve(),
      });
      const text = summaryLines(options, registry, RABBIT).join('\n');
      expect(text).not.toContain('s3cret');
      expect(text).toContain('RabbitMQ (amqp://rabbit:5672/orders, classic queues)');
      expect(text).toContain('Consumer group billing: orders');
      expect(text).toContain('OrderPlaced → BillingHandler.onOrderPlaced');
      expect(text).toContain('dead letters to orders.billing.dlq');
      expect(text).toContain('types without a handler settled and counted');
      expect(text).toContain('held up to 1500000 ms, then dead-lettered');
    });

    it('names an event version and the oldest its upcasters take', () => {
      const options = resolveMessagingOptions({
        serviceName: 'shop',
        transport: { kind: 'kafka', brokers: ['k:9092'] },
        consumers: { unhandledTypesByGroup: { billing: 'dead-letter' } },
      });
      const registry = new HandlerRegistry();
      const v3 = defineEvent({ ...OrderPlaced, version: 3, upcasters: { 2: (v2: object) => v2 } });
      registry.add({ group: 'billing', event: v3, name: 'B.on', invoke: () => Promise.resolve() });
      const text = summaryLines(options, registry, KAFKA).join('\n');
      expect(text).toContain('OrderPlaced v3 (from v2 through upcasters) → B.on');
      expect(text).toContain('types without a handler dead-lettered');
    });
  });

  describe(summaryWarnings.name, () => {
    it('warns on RabbitMQ when the hold window reaches the default consumer_timeout', () => {
      const registry = new HandlerRegistry();
      registry.add({ group: 'billing', event: OrderPlaced, name: 'B.on', invoke: () => Promise.resolve() });
      const rabbit = (windowMs: number) =>
        resolveMessagingOptions({
          serviceName: 'shop',
          transport: { kind: 'rabbitmq', url: 'amqp://rabbit' },
          consumers: { versionHold: { windowMs } },
        });
      expect(summaryWarnings(rabbit(1_500_000), registry)).toEqual([]);
      expect(summaryWarnings(rabbit(1_800_000), registry)[0]).toContain('consumer_timeout');
    });
  });

  describe(withoutCredentials.name, () => {
    it('drops user and password, and never echoes what it cannot parse', () => {
      expect(withoutCredentials('amqp://u:p@h:5672/v')).toBe('amqp://h:5672/v');
      expect(withoutCredentials('not a url p@ss')).toBe('(an unparsable URL)');
    });
  });
});
