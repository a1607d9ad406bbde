import { RedriveRefusedError } from './redrive-refused.error';

/** Why an approval does not approve the plan it came with. */
export type ApprovalMismatch =
  | 'PLAN_EDITED'
  | 'OTHER_PLAN'
  | 'BAD_NAME'
  | 'UNKNOWN_APPROVER'
  | 'BAD_SIGNATURE'
  | 'SELF_APPROVAL'
  | 'INVALID_VALIDITY';

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
};

/** The approval does not approve this plan. Approve the plan you mean to run, unchanged. */
export class ApprovalMismatchError extends RedriveRefusedError {
  /** The guard that refused: always `APPROVAL_MISMATCH`. */
  readonly guard = 'APPROVAL_MISMATCH' as const;

  constructor(
    /** Why the approval does not approve the plan. */
    readonly mismatch: ApprovalMismatch,
  ) {
    super(`Redrive refused: ${EXPLANATIONS[mismatch]}. Approve the plan you mean to run, unchanged.`);
    this.name = 'ApprovalMismatchError';
  }
}
