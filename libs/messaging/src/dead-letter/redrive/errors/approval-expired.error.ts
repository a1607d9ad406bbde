import { RedriveRefusedError } from './redrive-refused.error';

/** The approval's validity ended (or has not begun): ask for a new approval of a fresh plan. */
export class ApprovalExpiredError extends RedriveRefusedError {
  readonly guard = 'APPROVAL_EXPIRED' as const;

  constructor(
    readonly expiresAt: string,
    readonly now: string,
  ) {
    super(
      `The approval expired at ${expiresAt} (now ${now}). Plan again and ask for a new approval: the DLQ may ` +
        `have changed since.`,
    );
    this.name = 'ApprovalExpiredError';
  }
}
