import { MessagingError } from './messaging.error';
import { FailureCategory } from './failure-category';

/**
 * Thrown by a handler to state why it failed, so the retry decision does not have to guess.
 * `code` is a short machine-readable token (it ends up in `msg.failure-code`); the message never leaves
 * the process. The retry policy decides on the category: by default only DESERIALIZATION, AUTHENTICATION,
 * AUTHORIZATION and CONFIGURATION are not retried (a VALIDATION failure a handler throws is, see the guide's
 * chapter 5). To say "never retry this" whatever the policy, throw a `PermanentError`; to say "retry later",
 * a `RetryLaterError`.
 *
 * @example throw new MessageHandlingError(FailureCategory.TRANSIENT, 'PAYMENTS_DOWN'); // retried per the policy
 * @example throw new PermanentError('POST_TITLE_MISSING'); // never retried: dead-lettered at once
 */
export class MessageHandlingError extends MessagingError {
  /** The category the retry decision engine decides on. */
  readonly category: FailureCategory;
  /** A short token such as `PAYMENT_DECLINED`; sanitised before it is written to a header. */
  readonly code: string;

  /**
   * @param category - why the delivery failed
   * @param code - a short machine-readable token
   * @param message - for logs only; default `"<category>: <code>"`
   * @param options - `cause`, the underlying error (kept for logs, never dead-lettered)
   */
  constructor(category: FailureCategory, code: string, message?: string, options?: { cause?: unknown }) {
    super(message ?? `${category}: ${code}`, options);
    this.name = 'MessageHandlingError';
    this.category = category;
    this.code = code;
  }
}
