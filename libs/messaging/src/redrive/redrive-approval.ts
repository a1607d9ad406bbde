import { randomBytes, sign, verify } from 'node:crypto';
import { ApproverKeyring } from './approvals/approver-keyring';
import { ApprovalEvidence } from './ledger/redrive-ledger.interface';
import { ApproverSigner } from './approvals/approver-keys';
import { isApproverName, samePerson } from './approvals/approver-name';
import { canonicalJson } from './canonical-json';
import { ApprovalExpiredError } from './errors/approval-expired.error';
import { ApprovalMismatchError } from './errors/approval-mismatch.error';
import { RedriveLimits } from './redrive-limits';
import { isPlanIntact, RedrivePlan } from './redrive-plan';
import { ReplayPlan } from './replay/replay-plan';

/**
 * A person's approval of one plan, valid until `expiresAt`, signed with the approver's own Ed25519 key: the
 * signature proves who approved (an executor trusts only the keys in its `ApproverKeyring`), and nothing in
 * it depends on a broker password. It works once: executing it records its nonce.
 */
export interface RedriveApproval {
  /** Version of the approval format: 2. */
  readonly version: 2;
  /** The hash of the approved plan. */
  readonly planHash: string;
  /** Who approved: a name in the executors' approver keyring. */
  readonly approver: string;
  /** 128 random bits, base64url: recorded when the approval is executed, so that it runs once. */
  readonly nonce: string;
  /**
   * When it was signed, ISO 8601, on the approver's clock. Valid from then, or up to
   * `RedriveLimits.CLOCK_SKEW_MS` before on the executor's clock.
   */
  readonly approvedAt: string;
  /** When its validity ends, ISO 8601: `approvedAt` plus the grant's `ttlMs` (at most 24 hours). */
  readonly expiresAt: string;
  /** Ed25519 signature, base64, of the canonical JSON of the fields above. */
  readonly signature: string;
}

/** What `signApproval()` needs besides the plan and the signer. */
export interface ApprovalGrant {
  /** Validity, ms. Default 15 minutes; at most 24 hours. */
  readonly ttlMs?: number;
}

const PURPOSE = 'nest-reliable-messaging/redrive-approval';

/**
 * Signs an approval of `plan` by `signer`, valid from `now` for `grant.ttlMs`. Refuses an approver who
 * made the plan (four eyes: the planner, the approver and the executor are three different people).
 */
export function signApproval(
  plan: RedrivePlan | ReplayPlan,
  signer: ApproverSigner,
  grant: ApprovalGrant,
  now: Date,
): RedriveApproval {
  if (!isApproverName(signer.approver)) throw new ApprovalMismatchError('BAD_NAME');
  if (!isPlanIntact(plan)) throw new ApprovalMismatchError('PLAN_EDITED');
  if (samePerson(signer.approver, plan.plannedBy)) throw new ApprovalMismatchError('SELF_APPROVAL');
  const ttlMs = grant.ttlMs ?? RedriveLimits.DEFAULT_APPROVAL_TTL_MS;
  if (!Number.isFinite(ttlMs) || ttlMs <= 0 || ttlMs > RedriveLimits.MAX_APPROVAL_TTL_MS) {
    throw new ApprovalMismatchError('INVALID_VALIDITY');
  }
  const unsigned = {
    version: 2 as const,
    planHash: plan.hash,
    approver: signer.approver,
    nonce: randomBytes(16).toString('base64url'),
    approvedAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + ttlMs).toISOString(),
  };
  const signature = sign(null, signedBytes(unsigned), signer.key).toString('base64');
  return { ...unsigned, signature };
}

/**
 * Checks that `approval` approves exactly this plan, was signed by the key the keyring holds for its
 * approver and is valid at `now`. Throws the guard's error otherwise. Who may approve whose plan is
 * `checkFourEyes()`'s.
 */
export function verifyApproval(
  plan: RedrivePlan | ReplayPlan,
  approval: RedriveApproval,
  keyring: ApproverKeyring,
  now: Date,
): void {
  if (!isPlanIntact(plan)) throw new ApprovalMismatchError('PLAN_EDITED');
  if (approval.planHash !== plan.hash) throw new ApprovalMismatchError('OTHER_PLAN');
  if (!isApproverName(approval.approver)) throw new ApprovalMismatchError('BAD_NAME');
  const key = keyring.publicKeyOf(approval.approver);
  if (!key) {
    throw new ApprovalMismatchError(
      'UNKNOWN_APPROVER',
      `the approver '${approval.approver}' is not in the approver keyring this redrive trusts ` +
        '(MESSAGING_ADMIN_APPROVERS)',
    );
  }
  const { signature, ...unsigned } = approval;
  const valid =
    typeof signature === 'string' &&
    verify(null, signedBytes(unsigned), key, Buffer.from(signature, 'base64'));
  if (!valid) throw new ApprovalMismatchError('BAD_SIGNATURE');
  const from = Date.parse(approval.approvedAt);
  const until = Date.parse(approval.expiresAt);
  if (!(until > from) || until - from > RedriveLimits.MAX_APPROVAL_TTL_MS) {
    throw new ApprovalMismatchError('INVALID_VALIDITY');
  }
  // An approval from a machine whose clock runs a little ahead is not refused for that.
  if (now.getTime() >= until || now.getTime() < from - RedriveLimits.CLOCK_SKEW_MS) {
    throw new ApprovalExpiredError(approval.expiresAt, now.toISOString());
  }
}

/** What is signed: the approval's fields as canonical JSON, with the purpose, so no other JSON passes. */
function signedBytes(unsigned: Omit<RedriveApproval, 'signature'>): Buffer {
  return Buffer.from(canonicalJson({ purpose: PURPOSE, ...unsigned }), 'utf8');
}

/**
 * What the audit log keeps of `approval` (issue 45, item 5): nonce, signature and times, the id of the key
 * `keyring` verifies it with and the keyring's fingerprint, so it can be checked again later.
 */
export function approvalEvidence(approval: RedriveApproval, keyring: ApproverKeyring): ApprovalEvidence {
  const { nonce, signature, approvedAt, expiresAt } = approval;
  const keyId = keyring.keyIdOf(approval.approver);
  return {
    nonce,
    signature,
    approvedAt,
    expiresAt,
    ...(keyId ? { keyId } : {}),
    keyring: keyring.fingerprint,
  };
}
