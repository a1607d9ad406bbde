import { ApprovedRedrivePlan } from './approved-redrive-plan';
import { ApprovalExpiredError } from './errors/approval-expired.error';
import { ApprovalMismatchError } from './errors/approval-mismatch.error';
import { ApprovalRequiredError } from './errors/approval-required.error';
import { MissingAdminCredentialError } from './errors/missing-admin-credential.error';
import { RedriveBatchTooLargeError } from './errors/redrive-batch-too-large.error';
import { SameSourceAndTargetError } from './errors/same-source-and-target.error';
import { PlannedMessage, RedrivePlan, sealPlan } from './redrive-plan';
import { RedriveService } from './redrive.service';

const t0 = new Date('2026-01-01T10:00:00.000Z');

/** Never connects: every case here is decided before the broker is reached (nothing listens on port 1). */
function service(now: () => Date = () => t0) {
  return new RedriveService({
    broker: { kind: 'rabbitmq', url: 'amqp://127.0.0.1:1' },
    credential: { principal: 'redrive-admin', secret: 's3cret' },
    clock: now,
  });
}

function message(index: number): PlannedMessage {
  return {
    position: { kind: 'queue', index },
    messageId: null,
    type: 'OrderPlaced',
    failureCategory: 'TRANSIENT',
    failureCode: 'FLAKY',
    attempts: 1,
    originDestination: 'orders',
    lastFailureAt: null,
    redriveCount: 0,
    previousRedriveIds: [],
    fingerprint: `sha256:${index}`,
  };
}

function plan(count = 0, target = 'orders.billing'): RedrivePlan {
  return sealPlan({
    version: 1,
    transport: 'rabbitmq',
    source: 'orders.billing.dlq',
    target,
    createdAt: t0.toISOString(),
    depth: count,
    messages: Array.from({ length: count }, (_, i) => message(i)),
  });
}

describe(RedriveService.name, () => {
  describe('constructor', () => {
    it('refuses to work without an admin credential', () => {
      expect(
        () =>
          new RedriveService({ broker: { kind: 'kafka', brokers: ['127.0.0.1:1'] }, credential: undefined }),
      ).toThrow(MissingAdminCredentialError);
    });
  });

  describe('plan', () => {
    it('refuses 101 messages and a target equal to the source before reading anything', async () => {
      await expect(service().plan({ source: 'a.g.dlq', limit: 101 })).rejects.toThrow(
        RedriveBatchTooLargeError,
      );
      await expect(service().plan({ source: 'a.g.dlq', target: 'a.g.dlq' })).rejects.toThrow(
        SameSourceAndTargetError,
      );
    });
  });

  describe('approve', () => {
    it('returns an approved plan for a valid approval', () => {
      const redrive = service();
      const approved = redrive.approve(plan(1), redrive.issueApproval(plan(1), { approver: 'jane' }));
      expect(approved.plan).toEqual(plan(1));
      expect(approved.approval.approver).toBe('jane');
    });

    it('refuses a plan without approval, with an expired one, or with one of another plan', () => {
      const later = new Date(t0.getTime() + 16 * 60_000);
      const approval = service().issueApproval(plan(1), { approver: 'jane' });
      expect(() => service().approve(plan(1), undefined)).toThrow(ApprovalRequiredError);
      expect(() => service(() => later).approve(plan(1), approval)).toThrow(ApprovalExpiredError);
      expect(() => service().approve(plan(2), approval)).toThrow(ApprovalMismatchError);
    });

    it('refuses a plan of 101 messages and one whose target is its source', () => {
      expect(() => service().issueApproval(plan(101), { approver: 'jane' })).toThrow(
        RedriveBatchTooLargeError,
      );
      expect(() => service().issueApproval(plan(1, 'orders.billing.dlq'), { approver: 'jane' })).toThrow(
        SameSourceAndTargetError,
      );
    });
  });

  describe('execute', () => {
    it('does not compile with a plain plan, and refuses one at run time', async () => {
      // @ts-expect-error an unapproved plan cannot be executed: plan → approve → execute
      await expect(service().execute(plan(1))).rejects.toThrow(ApprovalRequiredError);
    });

    it('refuses a forged approved plan and one approved by another service', async () => {
      const forged = { plan: plan(1), approval: {} } as unknown as ApprovedRedrivePlan;
      await expect(service().execute(forged)).rejects.toThrow(ApprovalRequiredError);
      const other = service();
      const approved = other.approve(plan(1), other.issueApproval(plan(1), { approver: 'jane' }));
      await expect(service().execute(approved)).rejects.toThrow(ApprovalRequiredError);
    });

    it('re-checks the expiry at execution', async () => {
      let now = t0;
      const redrive = service(() => now);
      const approved = redrive.approve(
        plan(1),
        redrive.issueApproval(plan(1), { approver: 'jane', ttlMs: 1_000 }),
      );
      now = new Date(t0.getTime() + 1_000);
      await expect(redrive.execute(approved)).rejects.toThrow(ApprovalExpiredError);
    });

    it('runs an approved plan once: an empty one moves nothing, a second run is refused', async () => {
      const redrive = service();
      const approved = redrive.approve(plan(0), redrive.issueApproval(plan(0), { approver: 'jane' }));
      const result = await redrive.execute(approved);
      expect(result).toMatchObject({ redriven: 0, leftInSource: 0, messages: [] });
      expect(result.redriveId).toMatch(/^[0-9a-f-]{36}$/);
      await expect(redrive.execute(approved)).rejects.toThrow(ApprovalRequiredError);
    });
  });
});
