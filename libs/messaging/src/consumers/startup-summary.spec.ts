import { z } from 'zod';
import { defineEvent } from '../envelope/event-definition';
import { resolveMessagingOptions } from '../options/resolve-messaging-options';
import { resolveRetryPolicy } from '../retry/retry-policy';
import { RetryMode, RetryOrdering } from '../retry/retry-policy.interface';
import { TransportCapabilities } from '../retry/transport-capabilities';
import { HandlerRegistry } from './handler-registry';
import { describeFailurePath, summaryLines, withoutCredentials } from './startup-summary';

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
    });
  });

  describe(withoutCredentials.name, () => {
    it('drops user and password, and never echoes what it cannot parse', () => {
      expect(withoutCredentials('amqp://u:p@h:5672/v')).toBe('amqp://h:5672/v');
      expect(withoutCredentials('not a url p@ss')).toBe('(an unparsable URL)');
    });
  });
});
