import { createHmac, generateKeyPairSync } from 'node:crypto';
import { ApproverKeyring } from './approvals/approver-keyring';
import { generateApproverKeys, readApproverSigner } from './approvals/approver-keys';
import { ApprovalExpiredError } from './errors/approval-expired.error';
import { ApprovalMismatchError } from './errors/approval-mismatch.error';
import { signApproval, verifyApproval } from './redrive-approval';
import { RedrivePlan, sealPlan } from './redrive-plan';

const t0 = new Date('2026-01-01T10:00:00.000Z');
const minutes = (n: number) => new Date(t0.getTime() + n * 60_000);

const jane = generateApproverKeys('jane.doe');
const bob = generateApproverKeys('bob');
const janeSigner = readApproverSigner(jane.privateKeyFile);
const keyring = ApproverKeyring.parse({ version: 1, approvers: [jane.publicKey, bob.publicKey] });

function plan(target = 'orders.billing', plannedBy = 'ops-alice'): RedrivePlan {
  return sealPlan({
    version: 2,
    transport: 'rabbitmq',
    plannedBy,
    source: 'orders.billing.dlq',
    target,
    group: 'billing',
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
    it('names the plan, the approver, a fresh nonce and a validity of 15 minutes by default', () => {
      const approval = signApproval(plan(), janeSigner, {}, t0);
      expect(approval).toMatchObject({
        version: 2,
        planHash: plan().hash,
        approver: 'jane.doe',
        approvedAt: t0.toISOString(),
        expiresAt: minutes(15).toISOString(),
      });
      expect(approval.nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(signApproval(plan(), janeSigner, {}, t0).nonce).not.toBe(approval.nonce);
      expect(Buffer.from(approval.signature, 'base64')).toHaveLength(64);
    });

    it('refuses the planner as approver, an edited plan, and a validity that is not positive or over a day', () => {
      expect(mismatch(() => signApproval(plan('orders.billing', 'Jane.Doe'), janeSigner, {}, t0))).toBe(
        'SELF_APPROVAL',
      );
      expect(mismatch(() => signApproval({ ...plan(), depth: 7 }, janeSigner, {}, t0))).toBe('PLAN_EDITED');
      for (const ttlMs of [0, -1, 24 * 3_600_000 + 1, Number.NaN]) {
        expect(mismatch(() => signApproval(plan(), janeSigner, { ttlMs }, t0))).toBe('INVALID_VALIDITY');
      }
    });

    it('refuses an approver name with control characters', () => {
      const sneaky = { ...janeSigner, approver: 'jane\u001b[2K.doe' };
      expect(mismatch(() => signApproval(plan(), sneaky, {}, t0))).toBe('BAD_NAME');
    });
  });

  describe(verifyApproval.name, () => {
    const approval = signApproval(plan(), janeSigner, { ttlMs: 10 * 60_000 }, t0);
    const check = (a = approval, p = plan(), now = t0) => verifyApproval(p, a, keyring, now);

    it('accepts the approval of this plan by a keyring approver while it is valid', () => {
      expect(() => check(approval, plan(), minutes(9))).not.toThrow();
    });

    it('refuses it once it expired, and before it began (beyond a minute of clock skew)', () => {
      expect(() => check(approval, plan(), minutes(10))).toThrow(ApprovalExpiredError);
      expect(() => check(approval, plan(), minutes(-2))).toThrow(ApprovalExpiredError);
      expect(() => check(approval, plan(), minutes(-0.5))).not.toThrow();
    });

    it('refuses it for another plan or an edited plan', () => {
      expect(mismatch(() => check(approval, plan('other')))).toBe('OTHER_PLAN');
      expect(mismatch(() => check(approval, { ...plan(), target: 'elsewhere' }))).toBe('PLAN_EDITED');
    });

    it('proves the approver: another name, another key, or a changed field does not verify', () => {
      expect(mismatch(() => check({ ...approval, approver: 'bob' }))).toBe('BAD_SIGNATURE');
      expect(mismatch(() => check({ ...approval, approver: 'mallory' }))).toBe('UNKNOWN_APPROVER');
      const stretched = { ...approval, expiresAt: minutes(600).toISOString() };
      expect(mismatch(() => check(stretched))).toBe('BAD_SIGNATURE');
      expect(mismatch(() => check({ ...approval, nonce: 'AAAAAAAAAAAAAAAAAAAAAA' }))).toBe('BAD_SIGNATURE');
      // A key pair of one's own, under a name the keyring knows: refused.
      const impostor = { approver: 'jane.doe', key: generateKeyPairSync('ed25519').privateKey };
      expect(mismatch(() => check(signApproval(plan(), impostor, {}, t0)))).toBe('BAD_SIGNATURE');
      expect(mismatch(() => check({ ...approval, approver: '' }))).toBe('BAD_NAME');
    });

    it('refuses an approver missing from the keyring naming the fix (the keyring file), with a guard of its own', () => {
      let error: unknown;
      try {
        check({ ...approval, approver: 'mallory' });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ApprovalMismatchError);
      const refused = error as ApprovalMismatchError;
      expect(refused.guard).toBe('UNKNOWN_APPROVER');
      expect(refused.message).toContain("the approver 'mallory' is not in the approver keyring");
      expect(refused.message).toContain('the keyring file whose path MESSAGING_ADMIN_APPROVERS gives');
      expect(refused.message).not.toContain('Approve the plan you mean to run');
      // An edited plan still says to approve the plan as it was made.
      expect(new ApprovalMismatchError('PLAN_EDITED').guard).toBe('APPROVAL_MISMATCH');
      expect(new ApprovalMismatchError('PLAN_EDITED').message).toContain('Approve the plan you mean to run');
    });

    it('holds nothing a broker password could be guessed from: the signature is not an HMAC of the fields', () => {
      const fields = [approval.planHash, approval.approver, approval.approvedAt, approval.expiresAt].join(
        '\n',
      );
      for (const guess of ['hunter2', 'password', 'guest', 'x']) {
        expect(createHmac('sha256', guess).update(fields).digest('hex')).not.toBe(approval.signature);
      }
      expect(JSON.stringify(approval)).not.toMatch(/signedBy|secret/);
    });
  });
});
