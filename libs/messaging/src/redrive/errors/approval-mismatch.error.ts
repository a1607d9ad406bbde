import { RedriveRefusedError } from './redrive-refused.error';

/** Why an approval does not approve the plan it came with. */
export type ApprovalMismatch =
  | 'PLAN_EDITED'
  | 'OTHER_PLAN'
  | 'BAD_NAME'
  | 'UNKNOWN_APPROVER'
  | 'BAD_SIGNATURE'
  | 'SELF_APPROVAL'
  | 'INVALID_VALIDITY'
  | 'POST_DATED'
  | 'NO_IDENTITY_MAP'
  | 'UNMAPPED_ACCOUNT';

const EXPLANATIONS: Record<ApprovalMismatch, string> = {
  PLAN_EDITED: 'the plan was changed after it was made (its content no longer matches its hash)',
  OTHER_PLAN: 'the approval names another plan',
  BAD_NAME: 'the approver’s name is empty or holds characters other than letters, digits, ".", "_", "@", "-"',
  UNKNOWN_APPROVER:
    'the approver is not in the approver keyring this redrive trusts (MESSAGING_ADMIN_APPROVERS)',
  BAD_SIGNATURE:
    'the approval was not signed with the key the keyring holds for its approver, or was changed after signing',
  SELF_APPROVAL:
    'the approver made the plan or runs the redrive; four eyes: planner, approver and executor are three people',
  INVALID_VALIDITY: 'the approval’s validity period is invalid or longer than allowed',
  POST_DATED:
    'the approval is dated later than the audit log recorded it (its approvedAt is after the APPROVE ' +
    'entry’s database time, beyond the allowed clock skew)',
  NO_IDENTITY_MAP:
    'no identity map is configured, so four eyes cannot tell people apart: give a keyring of version 2 ' +
    '(MESSAGING_ADMIN_APPROVERS) that lists each person with the accounts they act under; only local ' +
    'development (--local-plaintext, brokers on this machine) goes without',
  UNMAPPED_ACCOUNT: 'an account is in no entry of the identity map (MESSAGING_ADMIN_APPROVERS)',
};

/** What to do about each mismatch: the refusal names its fix. */
const FIXES: Record<ApprovalMismatch, string> = {
  PLAN_EDITED: 'Approve the plan you mean to run, unchanged',
  OTHER_PLAN: 'Approve the plan you mean to run, unchanged',
  BAD_NAME: 'Approve with a key made by "nest-messaging approver keygen"',
  UNKNOWN_APPROVER:
    'Add the approver’s entry (as "nest-messaging approver keygen" prints it: name and publicKey) to ' +
    '"people" in the keyring file whose path MESSAGING_ADMIN_APPROVERS gives, then run the redrive again; ' +
    'the approval stays usable until it expires',
  BAD_SIGNATURE:
    'Approve again with the key whose public part the keyring holds, or correct the keyring’s entry for the approver',
  SELF_APPROVAL: 'Have another person approve (or execute)',
  INVALID_VALIDITY: 'Approve again, for at most 24 h',
  POST_DATED: 'Set the approver’s clock right and approve again',
  NO_IDENTITY_MAP:
    'Give in MESSAGING_ADMIN_APPROVERS the path of a keyring file of version 2 (the identity map)',
  UNMAPPED_ACCOUNT:
    'Add the account to the "accounts" of its person in the keyring file MESSAGING_ADMIN_APPROVERS names',
};

/** The guard of an approval mismatch: an approver the keyring does not hold has a code of its own. */
export type ApprovalMismatchGuard = 'APPROVAL_MISMATCH' | 'UNKNOWN_APPROVER';

/**
 * The approval does not approve this plan, or not with this keyring. The refusal names its fix: approve the
 * plan you mean to run, unchanged; or, for an approver the keyring does not hold (`UNKNOWN_APPROVER`, audited
 * as such), add them to the keyring file.
 */
export class ApprovalMismatchError extends RedriveRefusedError {
  /** The guard that refused: `UNKNOWN_APPROVER` for an approver missing from the keyring, else `APPROVAL_MISMATCH`. */
  readonly guard: ApprovalMismatchGuard;

  constructor(
    /** Why the approval does not approve the plan. */
    readonly mismatch: ApprovalMismatch,
    /** The case at hand in words, e.g. which account is unknown; default: the mismatch explained. */
    readonly detail: string = EXPLANATIONS[mismatch],
  ) {
    super(`Redrive refused: ${detail}. ${FIXES[mismatch]}.`);
    this.guard = mismatch === 'UNKNOWN_APPROVER' ? 'UNKNOWN_APPROVER' : 'APPROVAL_MISMATCH';
    this.name = 'ApprovalMismatchError';
  }
}
