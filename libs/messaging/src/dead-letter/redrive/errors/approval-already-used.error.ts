import { RedriveRefusedError } from './redrive-refused.error';

/** The approval was executed before (its nonce is recorded): an approval works once. Plan and approve again. */
export class ApprovalAlreadyUsedError extends RedriveRefusedError {
  readonly guard = 'APPROVAL_USED' as const;

  constructor(
    readonly approver: string,
    readonly usedBy: string | undefined,
  ) {
    super(
      `Redrive refused: this approval by ${approver} was already executed${usedBy ? ` (by ${usedBy})` : ''}; ` +
        'an approval works once. Plan again and ask for a new approval.',
    );
    this.name = 'ApprovalAlreadyUsedError';
  }
}
