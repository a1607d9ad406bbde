import { parseMessagingTopology } from '../../topology/messaging-topology';
import { ApproverKeyring } from '../approvals/approver-keyring';
import { generateApproverKeys, readApproverSigner } from '../approvals/approver-keys';
import { ApprovalMismatchError } from '../errors/approval-mismatch.error';
import { RedrivePlanAlteredError } from '../errors/redrive-plan-altered.error';
import { RedriveTargetRefusedError } from '../errors/redrive-target-refused.error';
import { reviewPlan } from '../plan-review';
import { signApproval, verifyApproval } from '../redrive-approval';
import { isPlanIntact } from '../redrive-plan';
import { parseReplayPlan } from './replay-plan.schema';
import { isReplayPlan, ReplayPlan, sealReplayPlan, UnsealedReplayPlan } from './replay-plan';
import { checkReplayRoute } from './replay-review';

const t0 = new Date('2026-01-01T10:00:00.000Z');
const jane = generateApproverKeys('jane');
const keyring = ApproverKeyring.parse({ version: 1, approvers: [jane.publicKey] });

function plan(overrides: Partial<UnsealedReplayPlan> = {}): ReplayPlan {
  return sealReplayPlan({
    version: 2,
    kind: 'replay',
    transport: 'kafka',
    plannedBy: 'ops-alice',
    source: 'orders',
    target: 'orders',
    group: 'billing',
    createdAt: t0.toISOString(),
    window: { by: 'time', from: '2026-01-01T09:00:00.000Z', to: '2026-01-01T09:30:00.000Z' },
    partitions: [{ partition: 0, from: '10', to: '20' }],
    records: 10,
    inbox: 'reprocess',
    ratePerSecond: 50,
    replayId: '0190c0de-0000-7000-8000-000000000001',
    ...overrides,
  });
}

const ledgerOf = (planner: string | undefined) => ({ plannerOf: async () => planner });

describe('replay plan review', () => {
  it('is a plan of its own kind, sealed and read back by the redrive plan hash rule', () => {
    const p = plan();
    expect(isReplayPlan(p)).toBe(true);
    expect(isPlanIntact(p)).toBe(true);
    const edited: ReplayPlan = { ...p, inbox: 'skip' };
    expect(isPlanIntact(edited)).toBe(false);
    expect(parseReplayPlan(JSON.parse(JSON.stringify(p)))).toEqual(p);
    expect(() => parseReplayPlan({ ...p, extra: 1 })).toThrow();
  });

  it('reviewPlan takes a replay plan on the same path: the planner from the audit log', async () => {
    await expect(reviewPlan(plan(), ledgerOf('ops-alice'))).resolves.toBe('ops-alice');
  });

  it('refuses a plan the audit log does not have, or names another planner, or that goes elsewhere', async () => {
    await expect(reviewPlan(plan(), ledgerOf(undefined))).rejects.toThrow(RedrivePlanAlteredError);
    await expect(reviewPlan(plan(), ledgerOf('ops-mallory'))).rejects.toThrow(/planner/);
    await expect(reviewPlan(plan({ target: 'payments' }), ledgerOf('ops-alice'))).rejects.toThrow(
      /this replay goes to 'orders'/,
    );
    await expect(reviewPlan({ ...plan(), group: 'mail' }, ledgerOf('ops-alice'))).rejects.toThrow(
      ApprovalMismatchError,
    );
  });

  it("on RabbitMQ goes to the group's work queue and reads the destination's journal, and nowhere else", async () => {
    const rabbit = { transport: 'rabbitmq' as const, target: 'orders.billing', journal: 'orders:journal' };
    const p = plan(rabbit);
    expect(parseReplayPlan(JSON.parse(JSON.stringify(p)))).toEqual(p);
    await expect(reviewPlan(p, ledgerOf('ops-alice'))).resolves.toBe('ops-alice');
    await expect(reviewPlan(plan({ ...rabbit, target: 'orders' }), ledgerOf('ops-alice'))).rejects.toThrow(
      /this replay goes to 'orders.billing'/,
    );
    await expect(
      reviewPlan(plan({ ...rabbit, target: 'orders.mail' }), ledgerOf('ops-alice')),
    ).rejects.toThrow(RedrivePlanAlteredError);
    await expect(
      reviewPlan(plan({ ...rabbit, journal: 'payments:journal' }), ledgerOf('ops-alice')),
    ).rejects.toThrow(/journal: the plan says 'payments:journal', orders's is 'orders:journal'/);
  });

  it('refuses a dead-letter or retry topic, and a group the topology does not name for the topic', () => {
    expect(() => checkReplayRoute('orders.billing.dlq', 'billing')).toThrow(RedriveTargetRefusedError);
    expect(() => checkReplayRoute('orders.billing.retry.5000ms', 'billing')).toThrow(
      RedriveTargetRefusedError,
    );
    expect(() => checkReplayRoute('orders', 'bad group')).toThrow(RedriveTargetRefusedError);
    const topology = parseMessagingTopology({ groups: [{ group: 'billing', destination: 'orders' }] });
    expect(() => checkReplayRoute('orders', 'billing', topology)).not.toThrow();
    expect(() => checkReplayRoute('orders', 'mail', topology)).toThrow(/names no group 'mail' of orders/);
  });

  it('is signed and verified like a redrive plan; the planner may not approve it', () => {
    const signer = readApproverSigner(jane.privateKeyFile);
    const approval = signApproval(plan(), signer, {}, t0);
    expect(() => verifyApproval(plan(), approval, keyring, t0)).not.toThrow();
    expect(() => verifyApproval(plan({ ratePerSecond: 51 }), approval, keyring, t0)).toThrow(
      ApprovalMismatchError,
    );
    expect(() => signApproval(plan({ plannedBy: 'jane' }), signer, {}, t0)).toThrow(
      /SELF_APPROVAL|same|four/i,
    );
  });
});
