import { ApprovalExpiredError } from './errors/approval-expired.error';
import { ApprovalMismatchError } from './errors/approval-mismatch.error';
import { signApproval, verifyApproval } from './redrive-approval';
import { RedrivePlan, sealPlan } from './redrive-plan';

const credential = { principal: 'redrive-admin', secret: 's3cret' };
const t0 = new Date('2026-01-01T10:00:00.000Z');
const minutes = (n: number) => new Date(t0.getTime() + n * 60_000);

function plan(target = 'orders.billing'): RedrivePlan {
  return sealPlan({
    version: 1,
    transport: 'rabbitmq',
    source: 'orders.billing.dlq',
    target,
    createdAt: t0.toISOString(),
    depth: 1,
    messages: [],
  });
}

function mismatch(run: () => void): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApprovalMismatchError);
    return (error as ApprovalMismatchError).mismatch;
  }
  throw new Error('no error thrown');
}

describe('redrive approval', () => {
  describe(signApproval.name, () => {
    it('names the plan, the approver and a validity of 15 minutes by default', () => {
      const approval = signApproval(plan(), { approver: ' jane ' }, credential, t0);
      expect(approval).toMatchObject({
        planHash: plan().hash,
        approver: 'jane',
        signedBy: 'redrive-admin',
        approvedAt: t0.toISOString(),
        expiresAt: minutes(15).toISOString(),
      });
      expect(approval.signature).toMatch(/^[0-9a-f]{64}$/);
    });

    it('refuses no approver, an edited plan, and a validity that is not positive or longer than a day', () => {
      expect(mismatch(() => signApproval(plan(), { approver: ' ' }, credential, t0))).toBe('NO_APPROVER');
      expect(mismatch(() => signApproval({ ...plan(), depth: 7 }, { approver: 'j' }, credential, t0))).toBe(
        'PLAN_EDITED',
      );
      for (const ttlMs of [0, -1, 24 * 3_600_000 + 1, Number.NaN]) {
        expect(mismatch(() => signApproval(plan(), { approver: 'j', ttlMs }, credential, t0))).toBe(
          'INVALID_VALIDITY',
        );
      }
    });
  });

  describe(verifyApproval.name, () => {
    const approval = signApproval(plan(), { approver: 'jane', ttlMs: 10 * 60_000 }, credential, t0);

    it('accepts the approval of this plan while it is valid', () => {
      expect(() => verifyApproval(plan(), approval, credential, minutes(9))).not.toThrow();
    });

    it('refuses it once it expired, and before it began (beyond a minute of clock skew)', () => {
      expect(() => verifyApproval(plan(), approval, credential, minutes(10))).toThrow(ApprovalExpiredError);
      expect(() => verifyApproval(plan(), approval, credential, minutes(-2))).toThrow(ApprovalExpiredError);
      expect(() => verifyApproval(plan(), approval, credential, minutes(-0.5))).not.toThrow();
    });

    it('refuses it for another plan or an edited plan', () => {
      expect(mismatch(() => verifyApproval(plan('other'), approval, credential, t0))).toBe('OTHER_PLAN');
      const edited = { ...plan(), target: 'elsewhere' };
      expect(mismatch(() => verifyApproval(edited, approval, credential, t0))).toBe('PLAN_EDITED');
    });

    it('refuses an approval signed with another secret or changed after signing', () => {
      const other = { ...credential, secret: 'other' };
      expect(mismatch(() => verifyApproval(plan(), approval, other, t0))).toBe('BAD_SIGNATURE');
      const stretched = { ...approval, expiresAt: minutes(600).toISOString() };
      expect(mismatch(() => verifyApproval(plan(), stretched, credential, t0))).toBe('BAD_SIGNATURE');
      const renamed = { ...approval, approver: 'mallory' };
      expect(mismatch(() => verifyApproval(plan(), renamed, credential, t0))).toBe('BAD_SIGNATURE');
      expect(mismatch(() => verifyApproval(plan(), { ...approval, approver: '' }, credential, t0))).toBe(
        'NO_APPROVER',
      );
    });
  });
});
