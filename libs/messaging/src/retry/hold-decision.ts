import { FailureCategory } from '../errors/failure-category';
import { computeRetryDelay } from './backoff';
import { DeadLetterDecision, RejectDecision } from './retry-decision';
import { ResolvedRetryPolicy } from './retry-policy.interface';
import { TransportCapabilities } from './transport-capabilities';

/**
 * How long a consumer holds a message it cannot read yet (a newer event version, an older one it has no
 * upcaster for, an upcaster that failed) and how often it looks at it again: full-jitter backoff from
 * `initialDelayMs`, ×2, at most `maxDelayMs`, for `windowMs` in all.
 */
export interface HoldWindow {
  /** How long a message is held before it is dead-lettered, ms; 0 dead-letters at once. */
  readonly windowMs: number;
  /** The first wait, ms. */
  readonly initialDelayMs: number;
  /** The longest wait between two looks, ms. */
  readonly maxDelayMs: number;
}

/**
 * Hold the message where it is and look at it again after `delayMs`: `PAUSE` the ordered stream (Kafka: the
 * partition waits, its later messages behind it), or `WAIT` in the consumer with the delivery unsettled
 * (RabbitMQ: its lane waits). Either way another instance (an upgraded one) gets it if this one stops.
 */
export interface HoldDecision {
  readonly kind: 'HOLD';
  readonly how: 'PAUSE' | 'WAIT';
  /** Jittered, and never past the window's end. */
  readonly delayMs: number;
}

/** What `decideHold` decides on. No I/O: the random source is injected. */
export interface HoldDecisionInput {
  /** Why it is held: VALIDATION (a version it cannot take) or UPCAST (an upcaster failed). */
  readonly category: FailureCategory;
  /** How long this consumer has held the message so far, ms (0 on its first hold). */
  readonly heldForMs: number;
  /** The 1-based number of this hold (the first look that found it unreadable is 1). */
  readonly hold: number;
  readonly window: HoldWindow;
  /** The policy of the message's handler or destination: `onNonRetryable: 'REJECT'` drops a VALIDATION one at the end. */
  readonly policy?: ResolvedRetryPolicy;
  readonly capabilities: TransportCapabilities;
  /** Uniform numbers in `[0, 1)`, from the injected `Clock`'s `random`. */
  readonly random: () => number;
}

/**
 * Decides what becomes of a message this consumer cannot read yet. Within the window: hold it, in place
 * (pause an ordered stream, since a key's later messages may depend on it; wait elsewhere), for a jittered
 * backoff cut at the window's end. After it: dead-letter it (`HOLD_EXPIRED`), or drop it when the policy says
 * `onNonRetryable: 'REJECT'`, except an UPCAST failure, which is never dropped (the message is fine: the
 * consumer's code failed on it). Pure.
 */
export function decideHold(input: HoldDecisionInput): HoldDecision | DeadLetterDecision | RejectDecision {
  const { window, heldForMs, capabilities } = input;
  const left = window.windowMs - Math.max(0, heldForMs);
  if (!(left > 0)) {
    // Never dropped: an upcaster that failed (the message is fine) or a tenant this service lacks (CONFIGURATION).
    const kept =
      input.category === FailureCategory.UPCAST || input.category === FailureCategory.CONFIGURATION;
    const drop = input.policy?.onNonRetryable === 'REJECT' && !kept;
    return drop
      ? { kind: 'REJECT', reason: 'NON_RETRYABLE' }
      : { kind: 'DEAD_LETTER', reason: 'HOLD_EXPIRED' };
  }
  const backoff = { initialDelayMs: window.initialDelayMs, multiplier: 2, maxDelayMs: window.maxDelayMs };
  const delayMs = Math.min(Math.ceil(left), computeRetryDelay(backoff, input.hold, input.random));
  return { kind: 'HOLD', how: capabilities.orderedStream ? 'PAUSE' : 'WAIT', delayMs };
}
