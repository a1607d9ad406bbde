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
  NO_IDENTITY_MAP:
    'no identity map is configured, so four eyes cannot tell people apart: give a keyring of version 2 ' +
    '(MESSAGING_ADMIN_APPROVERS) that lists each person with the accounts they act under; only local ' +
    'development (--local-plaintext, brokers on this machine) goes without',
  UNMAPPED_ACCOUNT: 'an account is in no entry of the identity map (MESSAGING_ADMIN_APPROVERS)',
};

/** The approval does not approve this plan. Approve the plan you mean to run, unchanged. */
export class ApprovalMismatchError extends RedriveRefusedError {
  /** The guard that refused: always `APPROVAL_MISMATCH`. */
  readonly guard = 'APPROVAL_MISMATCH' as const;

  constructor(
    /** Why the approval does not approve the plan. */
    readonly mismatch: ApprovalMismatch,
    /** The case at hand in words, e.g. which account is unknown; default: the mismatch explained. */
    readonly detail: string = EXPLANATIONS[mismatch],
  ) {
    super(`Redrive refused: ${detail}. Approve the plan you mean to run, unchanged.`);
    this.name = 'ApprovalMismatchError';
  }
}
