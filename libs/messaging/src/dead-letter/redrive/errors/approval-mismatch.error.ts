import { RedriveRefusedError } from './redrive-refused.error';

/** Why an approval does not approve the plan it came with. */
export type ApprovalMismatch =
  'PLAN_EDITED' | 'OTHER_PLAN' | 'NO_APPROVER' | 'BAD_SIGNATURE' | 'INVALID_VALIDITY';

const EXPLANATIONS: Record<ApprovalMismatch, string> = {
  PLAN_EDITED: 'the plan was changed after it was made (its content no longer matches its hash)',
  OTHER_PLAN: 'the approval names another plan',
  NO_APPROVER: 'the approval names no approver',
  BAD_SIGNATURE: 'the approval was not signed with this admin credential, or was changed after signing',
  INVALID_VALIDITY: 'the approval’s validity period is invalid or longer than allowed',
};

/** The approval does not approve this plan. Approve the plan you mean to run, unchanged. */
export class ApprovalMismatchError extends RedriveRefusedError {
  readonly guard = 'APPROVAL_MISMATCH' as const;

  constructor(readonly mismatch: ApprovalMismatch) {
    super(`Redrive refused: ${EXPLANATIONS[mismatch]}. Approve the plan you mean to run, unchanged.`);
    this.name = 'ApprovalMismatchError';
  }
}
