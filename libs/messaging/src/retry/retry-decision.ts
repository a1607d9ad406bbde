import { FailureCategory } from '../errors/failure-category';
import { TransportCapabilities } from './transport-capabilities';
import { ResolvedRetryPolicy } from './retry-policy.interface';

/** Why a failed delivery is parked in the dead-letter destination. */
export type DeadLetterReason =
  | 'NON_RETRYABLE'
  | 'ATTEMPTS_EXHAUSTED'
  | 'NO_POLICY'
  | 'NO_RETRY_PATH'
  /** A message held because this consumer cannot read its version (yet) was still held after the window. */
  | 'HOLD_EXPIRED';

/** Park the message in the dead-letter destination (publish, confirm, then settle the source). */
export interface DeadLetterDecision {
  readonly kind: 'DEAD_LETTER';
  readonly reason: DeadLetterReason;
}

/** Drop a non-retryable message without dead-lettering it (the policy said `onNonRetryable: 'REJECT'`). */
export interface RejectDecision {
  readonly kind: 'REJECT';
  readonly reason: 'NON_RETRYABLE';
}

/** Pause the ordered stream, wait `delayMs`, then redeliver the same message in place. Keeps order. */
export interface PauseAndRetryDecision {
  readonly kind: 'PAUSE_AND_RETRY';
  /** Jittered delay in ms. */
  readonly delayMs: number;
  /** The delay the failure asked for (a `RetryLaterError`, a Retry-After), when it asked: `delayMs` derives from it. */
  readonly requestedMs?: number;
  /** The 1-based number of the next delivery. */
  readonly nextAttempt: number;
}

/** Publish the message to the retry destination of tier `tierMs`, due again at `dueAt`. Reorders. */
export interface RetryDestinationDecision {
  readonly kind: 'RETRY_DESTINATION';
  /** Jittered delay in ms. */
  readonly delayMs: number;
  /** The delay tier (retry queue or topic) the message goes to (see the decision engine). */
  readonly tierMs: number;
  /** The delay the failure asked for (a `RetryLaterError`, a Retry-After), when it asked: `delayMs` derives from it. */
  readonly requestedMs?: number;
  /** The 1-based number of the next delivery. */
  readonly nextAttempt: number;
  /** `now + delayMs`. */
  readonly dueAt: Date;
}

/** Wait `delayMs` and call the handler again within the same delivery. */
export interface RetryInlineDecision {
  readonly kind: 'RETRY_INLINE';
  /** Jittered delay in ms. */
  readonly delayMs: number;
  /** The delay the failure asked for (a `RetryLaterError`, a Retry-After), when it asked: `delayMs` derives from it. */
  readonly requestedMs?: number;
  /** The 1-based number of the next delivery. */
  readonly nextAttempt: number;
}

/** What to do with a failed delivery; turn it into broker actions by `kind`. */
export type RetryDecision =
  | DeadLetterDecision
  | RejectDecision
  | PauseAndRetryDecision
  | RetryDestinationDecision
  | RetryInlineDecision;

/** Everything `decideRetry` decides on. No I/O: the clock and the random source are injected. */
export interface RetryDecisionInput {
  /** Why the delivery failed, as the `ErrorClassifier` said. */
  readonly category: FailureCategory;
  /**
   * The failure said it is permanent (a `PermanentError`): not retried whatever the category's retryability
   * (step 1 decides, as for a non-retryable category). Default false.
   */
  readonly permanent?: boolean;
  /** The 1-based number of the delivery that just failed. */
  readonly attempt: number;
  /** The destination's resolved policy; `undefined` means no policy, hence no automatic retry. */
  readonly policy?: ResolvedRetryPolicy;
  /** Whether the destination is ordered (per key), as opposed to a work queue. */
  readonly destination: { readonly ordered: boolean };
  /** What the transport can do. */
  readonly capabilities: TransportCapabilities;
  /** The current time, from the injected `Clock`. */
  readonly now: () => Date;
  /** Uniform numbers in `[0, 1)`, from the injected `Clock`'s `random`. */
  readonly random: () => number;
  /**
   * The delay the failure asked for, ms (`requestedRetryDelay`): a retry waits at least that long, at most the
   * policy's `longestRetryDelay`. Only the delay changes, never the decision's kind, its attempt or its
   * tier's bounds. Ignored unless a finite number >= 0.
   */
  readonly requestedDelayMs?: number;
}
