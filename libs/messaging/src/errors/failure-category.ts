/**
 * Why a delivery failed. The retry decision engine decides on the category, never on error messages.
 * `msg.failure-category` in a dead-lettered message holds one of these.
 */
export enum FailureCategory {
  /** The body or its headers cannot be decoded (not JSON, no message id, wrong envelope version). */
  DESERIALIZATION = 'DESERIALIZATION',
  /**
   * Decoded, but the payload breaks the event's schema, the event type is unknown to the consumer, or its event
   * version is one the consumer cannot take (newer than it knows, or older than its upcasters reach).
   */
  VALIDATION = 'VALIDATION',
  /**
   * An upcaster of the consumer's event definition threw on the message, or turned it into a payload the
   * schema refuses: the consumer's code failed, not the message. Held, then dead-lettered; never dropped.
   */
  UPCAST = 'UPCAST',
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
