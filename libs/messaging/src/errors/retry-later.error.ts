import { FailureCategory } from './failure-category';
import { InvalidRetryDelayError } from './invalid-retry-delay.error';
import { MessageHandlingError } from './message-handling.error';

/** Options of a `RetryLaterError`. */
export interface RetryLaterOptions {
  /** A short machine-readable token for `msg.failure-code`. Default `RETRY_LATER`. */
  code?: string;
  /** For logs only. Default `"retry later: in <n> ms"` or `"retry later: at <ISO time>"`. */
  message?: string;
  /** The underlying error (kept for logs, never dead-lettered). */
  cause?: unknown;
}

/**
 * Thrown by a handler that knows when it is worth trying again (a downstream said "in 30 s", a quota resets at
 * a known time). A TRANSIENT failure that the handler's retry policy retries no sooner than asked, in every
 * mode and on both brokers, within the policy's bounds: never later than the longest delay the policy itself
 * waits, never beyond `maxAttempts`, and not at all without a policy (retry is opt-in). See the guide,
 * "A handler's own retry delay".
 *
 * ```ts
 * throw new RetryLaterError(30_000, { code: 'RATE_LIMITED' });
 * throw new RetryLaterError(new Date(quota.resetsAt));
 * ```
 */
export class RetryLaterError extends MessageHandlingError {
  /** How long to wait, in ms, when the error was given a delay. */
  readonly delayMs?: number;
  /** When to try again, when the error was given a time. */
  readonly retryAt?: Date;

  /**
   * @param after - a delay in ms (finite, at least 0), or the time to try again (a time in the past means now)
   * @param options - `code`, `message`, `cause`
   * @throws InvalidRetryDelayError for a negative, NaN or infinite delay, an invalid Date, or anything else
   */
  constructor(after: number | Date, options: RetryLaterOptions = {}) {
    const checked = checkedDelay(after);
    const { code = 'RETRY_LATER', message = describe(checked), cause } = options;
    super(FailureCategory.TRANSIENT, code, message, cause === undefined ? undefined : { cause });
    this.name = 'RetryLaterError';
    if (checked instanceof Date) this.retryAt = checked;
    else this.delayMs = checked;
  }

  /** The delay asked for, in ms from `now` (ms since the epoch): `delayMs`, or the time left until `retryAt`, at least 0. */
  delayFrom(now: number): number {
    if (this.retryAt === undefined) return this.delayMs ?? 0;
    return Math.max(0, this.retryAt.getTime() - now);
  }
}

function checkedDelay(after: unknown): number | Date {
  if (typeof after === 'number' && Number.isFinite(after) && after >= 0) return after;
  if (after instanceof Date && !Number.isNaN(after.getTime())) return new Date(after.getTime());
  throw new InvalidRetryDelayError(after);
}

function describe(after: number | Date): string {
  return after instanceof Date ? `retry later: at ${after.toISOString()}` : `retry later: in ${after} ms`;
}
