import { createHmac, timingSafeEqual } from 'node:crypto';
import { AdminCredential } from './admin-connection';
import { ApprovalExpiredError } from './errors/approval-expired.error';
import { ApprovalMismatchError } from './errors/approval-mismatch.error';
import { RedriveLimits } from './redrive-limits';
import { isPlanIntact, RedrivePlan } from './redrive-plan';

/**
 * A person's approval of one plan, valid until `expiresAt`. Signed with the admin credential's secret, so
 * that only an admin can issue one and nobody can stretch its validity or point it at another plan.
 */
export interface RedriveApproval {
  readonly version: 1;
  /** The hash of the approved plan. */
  readonly planHash: string;
  /** Who approved. */
  readonly approver: string;
  /** The admin principal whose secret signed the approval. */
  readonly signedBy: string;
  readonly approvedAt: string;
  readonly expiresAt: string;
  /** HMAC-SHA256 over the fields above, hex. */
  readonly signature: string;
}

/** What `issueApproval()` needs besides the plan. */
export interface ApprovalGrant {
  /** The approver's name, e.g. `jane.doe`. Required. */
  readonly approver: string;
  /** Validity, ms. Default 15 minutes; at most 24 hours. */
  readonly ttlMs?: number;
}

/** Signs an approval of `plan` for `grant.approver`, valid from `now` for `grant.ttlMs`. */
export function signApproval(
  plan: RedrivePlan,
  grant: ApprovalGrant,
  credential: AdminCredential,
  now: Date,
): RedriveApproval {
  const approver = grant.approver.trim();
  if (!approver) throw new ApprovalMismatchError('NO_APPROVER');
  if (!isPlanIntact(plan)) throw new ApprovalMismatchError('PLAN_EDITED');
  const ttlMs = grant.ttlMs ?? RedriveLimits.DEFAULT_APPROVAL_TTL_MS;
  if (!Number.isFinite(ttlMs) || ttlMs <= 0 || ttlMs > RedriveLimits.MAX_APPROVAL_TTL_MS) {
    throw new ApprovalMismatchError('INVALID_VALIDITY');
  }
  const unsigned = {
    version: 1 as const,
    planHash: plan.hash,
    approver,
    signedBy: credential.principal,
    approvedAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + ttlMs).toISOString(),
  };
  return { ...unsigned, signature: mac(unsigned, credential.secret) };
}

/**
 * Checks that `approval` approves exactly this plan, names an approver, was signed with this credential and
 * is valid at `now`. Throws the guard's error otherwise.
 */
export function verifyApproval(
  plan: RedrivePlan,
  approval: RedriveApproval,
  credential: AdminCredential,
  now: Date,
): void {
  if (!isPlanIntact(plan)) throw new ApprovalMismatchError('PLAN_EDITED');
  if (approval.planHash !== plan.hash) throw new ApprovalMismatchError('OTHER_PLAN');
  if (!approval.approver?.trim()) throw new ApprovalMismatchError('NO_APPROVER');
  if (!sameMac(mac(approval, credential.secret), approval.signature)) {
    throw new ApprovalMismatchError('BAD_SIGNATURE');
  }
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

function mac(approval: Omit<RedriveApproval, 'signature'>, secret: string): string {
  const text = [
    'redrive-approval',
    approval.version,
    approval.planHash,
    approval.approver,
    approval.signedBy,
    approval.approvedAt,
    approval.expiresAt,
  ].join('\n');
  return createHmac('sha256', secret).update(text).digest('hex');
}

function sameMac(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'hex');
  const b = Buffer.from(typeof given === 'string' ? given : '', 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
