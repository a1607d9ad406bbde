import { FailureCategory } from '../errors/failure-category';

/** How a failed delivery is retried. See the decision order in `retry-decision-engine.ts`. */
export enum RetryMode {
  /** Kafka: pause the partition, wait, seek back to the same offset. Keeps order; later messages wait. */
  PAUSE_PARTITION = 'PAUSE_PARTITION',
  /** Publish to a retry destination per delay tier (Kafka retry topics). Breaks order: needs ALLOW_REORDER. */
  RETRY_DESTINATION = 'RETRY_DESTINATION',
  /** Wait and call the handler again within the same delivery. */
  INLINE = 'INLINE',
  /** Let the broker hold the message for the delay (RabbitMQ: one TTL queue per delay tier, DLX back). */
  BROKER_DELAYED = 'BROKER_DELAYED',
}

/** Whether retries must keep a destination's order. */
export enum RetryOrdering {
  /** An ordered destination is never retried through a path that reorders. */
  PRESERVE = 'PRESERVE',
  /** The destination is a work queue; retries may overtake later messages. */
  ALLOW_REORDER = 'ALLOW_REORDER',
}

/** Exponential backoff: `min(maxDelayMs, initialDelayMs * multiplier^(attempt-1))`, then full jitter. */
export interface BackoffOptions {
  /** Delay before the first retry, in ms. Default 1000. */
  initialDelayMs?: number;
  /** Growth factor per attempt. Default 2. */
  multiplier?: number;
  /** Upper bound of the delay, in ms. Default 30000. */
  maxDelayMs?: number;
}

/** What `@RetryPolicy()` declares. */
export interface RetryPolicyOptions {
  /** Deliveries in all, the first included (3 = one delivery and two retries). Required; at least 1. */
  maxAttempts: number;
  /** How to retry. Required. */
  mode: RetryMode;
  /** Default PRESERVE. */
  ordering?: RetryOrdering;
  /** Default: 1000 ms, ×2, at most 30000 ms. */
  backoff?: BackoffOptions;
  /** Categories to retry although they are non-retryable by default (e.g. VALIDATION is retryable already). */
  retryableCategories?: FailureCategory[];
  /** Categories never to retry, on top of the defaults. */
  nonRetryableCategories?: FailureCategory[];
  /** What to do with a non-retryable failure. Default DEAD_LETTER; REJECT drops it (logged) without a DLQ. */
  onNonRetryable?: 'DEAD_LETTER' | 'REJECT';
}

/** A policy with every default filled in. */
export interface ResolvedRetryPolicy {
  readonly maxAttempts: number;
  readonly mode: RetryMode;
  readonly ordering: RetryOrdering;
  readonly backoff: Required<BackoffOptions>;
  readonly retryableCategories: readonly FailureCategory[];
  readonly nonRetryableCategories: readonly FailureCategory[];
  readonly onNonRetryable: 'DEAD_LETTER' | 'REJECT';
}
