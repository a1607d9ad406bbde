import { FailureCategory } from './failure-category';
import { MessageHandlingError } from './message-handling.error';

/** Options of a `PermanentError`. */
export interface PermanentErrorOptions {
  /** Why the delivery failed; the dead letter's `msg.failure-category`. Default `VALIDATION`. */
  category?: FailureCategory;
  /** For logs only. Default `"permanent: <code>"`. */
  message?: string;
  /** The underlying error (kept for logs, never dead-lettered). */
  cause?: unknown;
}

/**
 * Thrown by a handler that knows trying again cannot help (the message is wrong, not the moment): never
 * retried, whatever the retry policy, its mode and its category settings, on both brokers. The delivery is
 * dead-lettered on its first failure (dropped instead when the policy says `onNonRetryable: 'REJECT'`), with
 * `code` as its `msg.failure-code`.
 *
 * ```ts
 * if (!post.title) throw new PermanentError('POST_TITLE_MISSING');
 * throw new PermanentError('CARD_EXPIRED', { category: FailureCategory.AUTHORIZATION, cause: error });
 * ```
 */
export class PermanentError extends MessageHandlingError {
  /** Always true: the retry decision does not retry it (see `decideRetry`'s `permanent`). */
  readonly permanent = true;

  /**
   * @param code - a short machine-readable token such as `POST_TITLE_MISSING`
   * @param options - `category` (default VALIDATION), `message`, `cause`
   */
  constructor(code: string, options: PermanentErrorOptions = {}) {
    const { category = FailureCategory.VALIDATION, message = `permanent: ${code}`, cause } = options;
    super(category, code, message, cause === undefined ? undefined : { cause });
    this.name = 'PermanentError';
  }
}
