import { sealPlan } from '../../redrive/redrive-plan';
import { checkedEntry } from './postgres-console-plan-store';

describe('checkedEntry (issue 45 item 1: rows of the plan store are validated)', () => {
  const plan = sealPlan({
    version: 2,
    transport: 'rabbitmq',
    plannedBy: 'alice',
    source: 'orders.billing.dlq',
    target: 'orders',
    group: 'billing',
    createdAt: '2026-12-06T10:00:00.000Z',
    depth: 0,
    messages: [],
  });
  const row = (over: Record<string, unknown> = {}) =>
    ({
      id: 'id',
      source: plan.source,
      planned_by: plan.plannedBy,
      plan_hash: plan.hash,
      plan,
      approval: null,
      result: null,
      executed_at: null,
      stale_at: null,
      refusals: {},
      ...over,
    }) as Parameters<typeof checkedEntry>[0];
  const form = { __html: '<form method=post action=/console/redrive/plans/B/approve>' };

  it('keeps a valid row', () => {
    expect(checkedEntry(row())?.plan).toEqual(plan);
  });

  it('leaves out a plan that does not parse, match its hash or its columns', () => {
    expect(checkedEntry(row({ plan: { ...plan, plannedBy: form } }))).toBeUndefined();
    expect(checkedEntry(row({ plan: { ...plan, target: 'elsewhere' } }))).toBeUndefined();
    expect(checkedEntry(row({ planned_by: 'bob' }))).toBeUndefined();
    expect(checkedEntry(row({ plan_hash: 'sha256:0' }))).toBeUndefined();
  });

  it('ignores refusals, an approval or a result that do not validate', () => {
    const entry = checkedEntry(
      row({
        refusals: { jane: { message: form, at: '' } },
        approval: { approver: form },
        result: { redriveId: form },
      }),
    );
    expect(entry).toMatchObject({ refusals: {}, approval: undefined, result: undefined });
  });
});
