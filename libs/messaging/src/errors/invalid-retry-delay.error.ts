import { MessagingError } from './messaging.error';
import { showValue } from './shown-value';

/**
 * `new RetryLaterError(...)` was given a delay it cannot use: a number that is negative, NaN or infinite, an
 * invalid `Date`, or something else. Thrown where the handler builds the error, so the handler fails with this
 * one instead (an UNKNOWN failure, retried by the policy's own backoff): fix the call.
 */
export class InvalidRetryDelayError extends MessagingError {
  /** The value that was given. */
  readonly value: unknown;

  /** @param value - the delay or time given to `RetryLaterError` */
  constructor(value: unknown) {
    super(
      `RetryLaterError needs a delay in ms (a finite number >= 0) or a valid Date; got ${showValue(value)}. ` +
        'A Date in the past means "now"; for an HTTP answer, rethrow the HTTP client\'s error and its ' +
        'Retry-After is read for you.',
    );
    this.name = 'InvalidRetryDelayError';
    this.value = value;
  }
}
