import { RedriveApproval } from '../../redrive/redrive-approval';
import { PlannedMessage, RedrivePlan } from '../../redrive/redrive-plan';
import { RedriveResult } from '../../redrive/redrive-result';
import { ConsolePlan, describeState, planState } from './console-plan';

const message = (fingerprint: string, index: number): PlannedMessage => ({
  position: { kind: 'queue', index },
  messageId: `m-${fingerprint}`,
  type: 'PostCreated',
  failureCategory: 'PERMANENT',
  failureCode: 'X',
  attempts: 3,
  originDestination: 'post-create',
  lastFailureAt: null,
  redriveCount: 0,
  previousRedriveIds: [],
  fingerprint,
});

const plan = (createdAt: string, fingerprints: string[], source = 'orders.billing.dlq'): RedrivePlan => ({
  version: 2,
  transport: 'rabbitmq',
  plannedBy: 'alice',
  source,
  target: 'orders.billing',
  group: 'billing',
  createdAt,
  depth: fingerprints.length,
  messages: fingerprints.map(message),
  hash: `sha256:${fingerprints.join('')}`,
});

const approval = (expiresAt: string): RedriveApproval => ({
  version: 2,
  planHash: 'sha256:x',
  approver: 'bob',
  nonce: 'n',
  approvedAt: '2026-12-03T10:00:00.000Z',
  expiresAt,
  signature: 's',
});

const result = (p: RedrivePlan, redriveId: string): RedriveResult => ({
  redriveId,
  source: p.source,
  target: p.target,
  redriven: p.messages.length,
  leftInSource: 0,
  messages: p.messages.map((m) => ({ position: m.position, messageId: m.messageId, status: 'REDRIVEN' })),
});

const entry = (id: string, p: RedrivePlan, more: Partial<ConsolePlan> = {}): ConsolePlan => ({
  id,
  plan: p,
  refusals: {},
  ...more,
});

const at = (iso: string) => new Date(iso);

describe(planState.name, () => {
  const made = '2026-12-03T10:00:00.000Z';

  it('waits for an approval, then is approved until the approval runs out, then expired', () => {
    const waiting = entry('a', plan(made, ['f1']));
    expect(planState(waiting, [], at('2026-12-03T10:05:00Z'))).toEqual({ kind: 'waiting' });
    const approved = { ...waiting, approval: approval('2026-12-03T10:20:00.000Z') };
    expect(planState(approved, [], at('2026-12-03T10:19:59.999Z'))).toEqual({
      kind: 'approved',
      until: '2026-12-03T10:20:00.000Z',
    });
    const expired = planState(approved, [], at('2026-12-03T10:20:00.000Z'));
    expect(expired).toEqual({
      kind: 'expired',
      why: 'its approval by bob ran out at 2026-12-03T10:20:00.000Z',
    });
    expect(describeState(expired)).toMatch(/^expired: .*Nothing can run from it: plan again$/);
  });

  it('expires a plan that waited longer than the plan TTL for an approval', () => {
    const waiting = entry('a', plan(made, ['f1']));
    expect(planState(waiting, [], at('2026-12-03T10:59:59Z'), 3_600_000).kind).toBe('waiting');
    expect(planState(waiting, [], at('2026-12-03T11:00:00Z'), 3_600_000)).toEqual({
      kind: 'expired',
      why: 'it waited more than 1 h for an approval',
    });
  });

  it('is executed once it has a result, whatever else (an expired approval, a stale mark)', () => {
    const p = plan(made, ['f1']);
    const done = entry('a', p, {
      approval: approval('2026-12-03T10:20:00.000Z'),
      result: result(p, 'r-1'),
      executedAt: '2026-12-03T10:10:00.000Z',
      staleAt: '2026-12-03T10:11:00.000Z',
    });
    expect(planState(done, [], at('2026-12-04T00:00:00Z'))).toEqual({
      kind: 'executed',
      redriveId: 'r-1',
      redriven: 1,
    });
  });

  it('is stale once an execution found the queue changed', () => {
    const stale = entry('a', plan(made, ['f1']), {
      approval: approval('2026-12-03T10:20:00.000Z'),
      staleAt: '2026-12-03T10:06:00.000Z',
    });
    expect(planState(stale, [], at('2026-12-03T10:07:00Z'))).toMatchObject({ kind: 'stale' });
  });

  it('is stale when another plan of the source moved one of its messages after it was made', () => {
    const mine = entry('a', plan(made, ['f1', 'f2']), { approval: approval('2026-12-03T10:20:00.000Z') });
    const otherPlan = plan('2026-12-03T10:01:00.000Z', ['f2']);
    const other = entry('b', otherPlan, {
      result: result(otherPlan, 'r-2'),
      executedAt: '2026-12-03T10:02:00.000Z',
    });
    expect(planState(mine, [mine, other], at('2026-12-03T10:03:00Z'))).toEqual({
      kind: 'stale',
      why: 'redrive r-2 moved some of its messages at 2026-12-03T10:02:00.000Z',
    });
  });

  it('is not stale for a redrive of other messages, of another source, before it was made, or not yet run', () => {
    const mine = entry('a', plan(made, ['f1']));
    const otherMessages = plan(made, ['f9']);
    const otherSource = plan(made, ['f1'], 'orders.shipping.dlq');
    const before = plan('2026-12-03T09:00:00.000Z', ['f1']);
    const others = [
      entry('b', otherMessages, {
        result: result(otherMessages, 'r-b'),
        executedAt: '2026-12-03T10:01:00.000Z',
      }),
      entry('c', otherSource, { result: result(otherSource, 'r-c'), executedAt: '2026-12-03T10:01:00.000Z' }),
      entry('d', before, { result: result(before, 'r-d'), executedAt: '2026-12-03T09:30:00.000Z' }),
      entry('e', plan(made, ['f1'])),
    ];
    expect(planState(mine, others, at('2026-12-03T10:03:00Z'))).toEqual({ kind: 'waiting' });
  });

  it('is not stale when the other redrive left the shared message in the queue', () => {
    const mine = entry('a', plan(made, ['f1']));
    const otherPlan = plan(made, ['f1']);
    const notMoved: RedriveResult = {
      ...result(otherPlan, 'r-2'),
      redriven: 0,
      leftInSource: 1,
      messages: [{ position: { kind: 'queue', index: 0 }, messageId: 'm-f1', status: 'NOT_CONFIRMED' }],
    };
    const other = entry('b', otherPlan, { result: notMoved, executedAt: '2026-12-03T10:02:00.000Z' });
    expect(planState(mine, [other], at('2026-12-03T10:03:00Z')).kind).toBe('waiting');
  });
});
