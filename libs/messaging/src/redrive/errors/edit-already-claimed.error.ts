import { RedriveRefusedError } from './redrive-refused.error';

/**
 * Another edit of this dead letter was executed first: a dead letter is edited once (the claim is recorded
 * with the first edit's approval, in one transaction). Nothing was moved. Look at the edited copy, or plan
 * a new edit of it if it failed again.
 */
export class EditAlreadyClaimedError extends RedriveRefusedError {
  /** The guard that refused: always `EDIT_CLAIMED`. */
  readonly guard = 'EDIT_CLAIMED' as const;

  constructor(
    /** The dead-letter destination. */
    readonly source: string,
    /** The edited message's id. */
    readonly messageId: string | null,
    /** Who executed the first edit and when (`<principal> at <ISO 8601>`), from the ledger. */
    readonly claimedBy: string | undefined,
  ) {
    super(
      `Edit of ${messageId ?? 'a message without id'} in ${source} refused: another edit of this dead letter ` +
        `was executed${claimedBy ? ` (by ${claimedBy})` : ''}; a dead letter is edited once. Nothing was moved.`,
    );
    this.name = 'EditAlreadyClaimedError';
  }
}
