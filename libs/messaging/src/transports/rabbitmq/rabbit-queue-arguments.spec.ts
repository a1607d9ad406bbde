import { rabbitQueueSpec, rabbitQueuesOf, withQueueTypes } from './rabbit-queue-arguments';

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

  it('declares quorum tiers that dead-letter at-least-once, and no delivery limit', () => {
    const quorum = { ...group, queueType: 'quorum' as const };
    expect(rabbitQueueSpec(quorum, { kind: 'work' }).arguments).toEqual({ 'x-queue-type': 'quorum' });
    expect(rabbitQueueSpec(quorum, { kind: 'retry', tierMs: 1000 }).arguments).toEqual({
      'x-queue-type': 'quorum',
      'x-message-ttl': 1000,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': 'orders.billing',
      'x-dead-letter-strategy': 'at-least-once',
      'x-overflow': 'reject-publish',
    });
    expect(rabbitQueuesOf(quorum).some((q) => 'x-delivery-limit' in q.arguments)).toBe(false);
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
