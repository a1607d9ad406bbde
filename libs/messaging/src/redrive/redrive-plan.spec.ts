import { isPlanIntact, planHash, sealPlan, UnsealedRedrivePlan } from './redrive-plan';

const content: UnsealedRedrivePlan = {
  version: 2,
  transport: 'kafka',
  plannedBy: 'ops-alice',
  source: 'orders.billing.dlq',
  target: 'orders',
  group: 'billing',
  createdAt: '2026-01-01T10:00:00.000Z',
  depth: 1,
  messages: [
    {
      position: { kind: 'partition', partition: 2, offset: '7' },
      messageId: '0190a1b2-0000-7000-8000-000000000001',
      type: 'OrderPlaced',
      failureCategory: 'TRANSIENT',
      failureCode: 'FLAKY',
      attempts: 1,
      originDestination: 'orders',
      lastFailureAt: '2026-01-01T09:59:00.000Z',
      redriveCount: 0,
      previousRedriveIds: [],
      fingerprint: 'sha256:ab',
    },
  ],
};

describe('redrive plan', () => {
  describe(planHash.name, () => {
    it('does not depend on the order of keys', () => {
      const reordered = Object.fromEntries(
        Object.entries(content).reverse(),
      ) as unknown as UnsealedRedrivePlan;
      expect(Object.keys(reordered)[0]).toBe('messages');
      expect(planHash(reordered)).toBe(planHash(content));
      expect(planHash(content)).toMatch(/^sha256:[0-9a-f]{64}$/);
    });

    it('ignores the hash field itself', () => {
      expect(planHash(sealPlan(content))).toBe(planHash(content));
    });
  });

  describe(isPlanIntact.name, () => {
    it('sees any change to the content', () => {
      const plan = sealPlan(content);
      expect(isPlanIntact(plan)).toBe(true);
      expect(isPlanIntact({ ...plan, target: 'elsewhere' } as typeof plan)).toBe(false);
      expect(isPlanIntact({ ...plan, messages: [] } as typeof plan)).toBe(false);
      expect(isPlanIntact(JSON.parse(JSON.stringify(plan)) as typeof plan)).toBe(true);
    });
  });
});
