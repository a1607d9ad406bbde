import { RedriveRefusedError } from './redrive-refused.error';

/** The approval was executed before (its nonce is recorded): an approval works once. Plan and approve again. */
export class ApprovalAlreadyUsedError extends RedriveRefusedError {
  /** The guard that refused: always `APPROVAL_USED`. */
  readonly guard = 'APPROVAL_USED' as const;

  constructor(
    /** Who signed the approval. */
    readonly approver: string,
    /** Who executed it first and when (`<principal> at <ISO 8601>`), from the ledger; undefined if unknown. */
    readonly usedBy: string | undefined,
  ) {
    super(
      `Redrive refused: this approval by ${approver} was already executed${usedBy ? ` (by ${usedBy})` : ''}; ` +
        'an approval works once. Plan again and ask for a new approval.',
    );
    this.name = 'ApprovalAlreadyUsedError';
  }
}
