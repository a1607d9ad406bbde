import { MessagingError } from '../errors/messaging.error';

/** `dlq history --verify` found the audit log's hash chain broken (exit 1). */
export class AuditChainBrokenError extends MessagingError {
  constructor(
    /** The entry where it breaks, or `head`. */
    readonly brokenAt: string,
    /** What does not match. */
    readonly reason: string,
  ) {
    super(
      `The audit log's hash chain is broken at entry ${brokenAt}: ${reason}. Entries were changed or removed ` +
        'outside the CLI and the console: compare with a copy of the log, and find who holds the owner role.',
    );
    this.name = 'AuditChainBrokenError';
  }
}
