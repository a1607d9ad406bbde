import { MessagingError } from './messaging.error';
import { showValue } from './shown-value';

/**
 * A `@RetryPolicy()` declaration is invalid. A configuration error raised at startup (or when the policy
 * is resolved), not a runtime failure to catch: fix the declaration.
 */
export class InvalidRetryPolicyError extends MessagingError {
  /** The offending option, as a path such as `maxAttempts` or `backoff.multiplier`. */
  readonly field: string;
  /** The value that was given. */
  readonly value: unknown;

  /**
   * @param field - the offending option's path
   * @param value - the value given
   * @param allowed - what the option accepts, e.g. `"an integer >= 1"`
   */
  constructor(field: string, value: unknown, allowed: string) {
    super(`Invalid retry policy: ${field} is ${showValue(value)}; expected ${allowed}.`);
    this.name = 'InvalidRetryPolicyError';
    this.field = field;
    this.value = value;
  }
}
