import { RedriveRefusedError } from './redrive-refused.error';

/** The approval's validity ended (or has not begun): ask for a new approval of a fresh plan. */
export class ApprovalExpiredError extends RedriveRefusedError {
  /** The guard that refused: always `APPROVAL_EXPIRED`. */
  readonly guard = 'APPROVAL_EXPIRED' as const;

  constructor(
    /** The approval's `expiresAt`, ISO 8601. */
    readonly expiresAt: string,
    /** The time of the check on the executor's clock, ISO 8601. */
    readonly now: string,
  ) {
    super(
      `The approval expired at ${expiresAt} (now ${now}). Plan again and ask for a new approval: the DLQ may ` +
        `have changed since.`,
    );
    this.name = 'ApprovalExpiredError';
  }
}
