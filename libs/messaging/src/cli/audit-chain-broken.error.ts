import { MessagingError } from '../errors/messaging.error';

/** `dlq history --verify` found the audit log's hash chain broken (exit 1). */
export class AuditChainBrokenError extends MessagingError {
  constructor(
    /** The first entry where it breaks, or `head`. */
    readonly brokenAt: string,
    /** What does not match there. */
    readonly reason: string,
    /** Every entry where it breaks (`head` included), oldest first; default: `brokenAt` alone. */
    readonly entries: readonly string[] = [brokenAt],
  ) {
    super(
      `The audit log's hash chain is broken at ${entries.length === 1 ? 'entry' : 'entries'} ` +
        `${entries.join(', ')} (first: ${brokenAt}, ${reason}). Entries were changed or removed outside the CLI ` +
        'and the console: compare with a copy of the log, and find who holds the owner role.',
    );
    this.name = 'AuditChainBrokenError';
  }
}
