import { MessagingError } from './messaging.error';
import { FailureCategory } from './failure-category';

/**
 * Thrown by a handler to state why it failed, so the retry decision does not have to guess.
 * `code` is a short machine-readable token (it ends up in `msg.failure-code`); the message never leaves
 * the process.
 *
 * @example throw new MessageHandlingError(FailureCategory.VALIDATION, 'POST_TITLE_MISSING');
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
