import { parseMessagingTopology } from '../../topology/messaging-topology';
import {
  deliveryLimitPolicy,
  journalQueueSpec,
  rabbitQueueSpec,
  rabbitQueuesOf,
  withQueueTypes,
} from './rabbit-queue-arguments';

describe('rabbitQueueSpec', () => {
  const group = { group: 'billing', destination: 'orders', retryTiersMs: [1000] };

  it('declares classic queues without a type argument (as before the option existed)', () => {
    expect(rabbitQueuesOf(group)).toEqual([
      { name: 'orders.billing', arguments: {} },
      {
        name: 'orders.billing.retry.1000ms',
        arguments: {
          'x-message-ttl': 1000,
          'x-dead-letter-exchange': '',
          'x-dead-letter-routing-key': 'orders.billing',
        },
      },
      { name: 'orders.billing.dlq', arguments: {} },
    ]);
  });

  // Without an explicit limit RabbitMQ 4.x applies 20 and drops what passes it.
  it('declares a quorum work queue with a delivery limit that dead-letters into its DLQ, at-least-once', () => {
    const quorum = { ...group, queueType: 'quorum' as const };
    expect(rabbitQueueSpec(quorum, { kind: 'work' })).toEqual({
      name: 'orders.billing',
      arguments: {
        'x-queue-type': 'quorum',
        'x-delivery-limit': 20,
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': 'orders.billing.dlq',
        'x-dead-letter-strategy': 'at-least-once',
        'x-overflow': 'reject-publish',
      },
      legacyArguments: { 'x-queue-type': 'quorum' },
    });
    expect(rabbitQueueSpec(quorum, { kind: 'dead-letter' })).toEqual({
      name: 'orders.billing.dlq',
      arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 1_000_000 },
      legacyArguments: { 'x-queue-type': 'quorum' },
    });
  });

  it('declares quorum tiers that dead-letter at-least-once, without a limit (nothing consumes them)', () => {
    const quorum = { ...group, queueType: 'quorum' as const };
    expect(rabbitQueueSpec(quorum, { kind: 'retry', tierMs: 1000 }).arguments).toEqual({
      'x-queue-type': 'quorum',
      'x-message-ttl': 1000,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': 'orders.billing',
      'x-dead-letter-strategy': 'at-least-once',
      'x-overflow': 'reject-publish',
    });
  });

  it('declares a quorum queue that exists without the limit as it is', () => {
    const legacy = {
      ...group,
      queueType: 'quorum' as const,
      withoutDeliveryLimit: new Set(['orders.billing']),
    };
    expect(rabbitQueueSpec(legacy, { kind: 'work' }).arguments).toEqual({ 'x-queue-type': 'quorum' });
    expect(rabbitQueueSpec(legacy, { kind: 'dead-letter' }).arguments).toHaveProperty('x-delivery-limit');
  });
});

describe('deliveryLimitPolicy', () => {
  it('gives the rabbitmqctl command that sets the limit and route on that queue alone', () => {
    const group = { group: 'billing', destination: 'orders', retryTiersMs: [], queueType: 'quorum' as const };
    const work = rabbitQueueSpec(group, { kind: 'work' });
    expect(deliveryLimitPolicy(work)).toBe(
      "rabbitmqctl set_policy 'messaging-orders.billing' '^orders\\.billing$' " +
        '\'{"delivery-limit":20,"dead-letter-exchange":"","dead-letter-routing-key":"orders.billing.dlq",' +
        '"dead-letter-strategy":"at-least-once","overflow":"reject-publish"}\' --apply-to queues',
    );
  });
});

describe('withQueueTypes', () => {
  it("takes the group's own type, else the destination's, else the default", () => {
    const groups = [
      { group: 'a', destination: 'orders', retryTiersMs: [], queueType: 'classic' as const },
      { group: 'b', destination: 'orders', retryTiersMs: [] },
      { group: 'c', destination: 'audit', retryTiersMs: [] },
    ];
    expect(withQueueTypes(groups, { orders: 'quorum' }, 'classic').map((g) => g.queueType)).toEqual([
      'classic',
      'quorum',
      'classic',
    ]);
  });
});

describe('journalQueueSpec', () => {
  it("declares a destination's journal as a stream named <destination>:journal, with the retention asked for", () => {
    expect(journalQueueSpec({ destination: 'orders', maxAge: '7D', maxLengthBytes: 10_000_000 })).toEqual({
      name: 'orders:journal',
      arguments: { 'x-queue-type': 'stream', 'x-max-age': '7D', 'x-max-length-bytes': 10_000_000 },
    });
    expect(journalQueueSpec({ destination: 'orders' })).toEqual({
      name: 'orders:journal',
      arguments: { 'x-queue-type': 'stream' },
    });
  });

  it('reads journals from a topology file, refusing a retention RabbitMQ would not take', () => {
    const journals = [{ destination: 'orders', maxAge: '36h' }];
    expect(parseMessagingTopology({ destinations: ['orders'], journals }).journals).toEqual(journals);
    for (const maxAge of ['7 days', '0D', '7d', '']) {
      expect(() => parseMessagingTopology({ journals: [{ destination: 'orders', maxAge }] })).toThrow(/unit/);
    }
    expect(() => parseMessagingTopology({ journals: [{ destination: 'a:b' }] })).toThrow();
  });
});
