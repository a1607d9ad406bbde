/**
 * Why a delivery failed. The retry decision engine decides on the category, never on error messages.
 * `msg.failure-category` in a dead-lettered message holds one of these.
 */
export enum FailureCategory {
  /** The body or its headers cannot be decoded (not JSON, no message id, wrong envelope version). */
  DESERIALIZATION = 'DESERIALIZATION',
  /** Decoded, but the payload breaks the event's schema, or the event type is unknown to the consumer. */
  VALIDATION = 'VALIDATION',
  /** A downstream refused our credentials. */
  AUTHENTICATION = 'AUTHENTICATION',
  /** A downstream refused the operation for our identity. */
  AUTHORIZATION = 'AUTHORIZATION',
  /** The consumer or a downstream is misconfigured. */
  CONFIGURATION = 'CONFIGURATION',
  /** Likely to succeed later: timeouts, dropped connections, deadlocks, throttling. */
  TRANSIENT = 'TRANSIENT',
  /** Anything the classifier does not recognise. */
  UNKNOWN = 'UNKNOWN',
}

/** Categories that are never retried automatically unless a policy lists them in `retryableCategories`. */
export const NON_RETRYABLE_BY_DEFAULT: readonly FailureCategory[] = [
  FailureCategory.DESERIALIZATION,
  FailureCategory.AUTHENTICATION,
  FailureCategory.AUTHORIZATION,
  FailureCategory.CONFIGURATION,
];
