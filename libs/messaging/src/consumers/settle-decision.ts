import { FailureCategory } from '../envelope/failure-category';
import { RetryDecision } from '../retry/retry-decision';
import { DeliveryActions } from '../transports/subscription.interface';

/** A failure, classified: what the retry engine and the dead-letter headers need. */
export interface Failure {
  readonly category: FailureCategory;
  readonly code: string;
  readonly messageId?: string;
  /** For the log line only (never copied into a message). */
  readonly detail?: string;
}

/** A decision that ends the delivery's handling here (an inline retry does not). */
export type SettleDecision = Exclude<RetryDecision, { kind: 'RETRY_INLINE' }>;

const SETTLE: {
  [K in SettleDecision['kind']]: (
    a: DeliveryActions,
    d: Extract<SettleDecision, { kind: K }>,
    h: Record<string, string>,
  ) => Promise<void>;
} = {
  DEAD_LETTER: (actions, _decision, headers) => actions.deadLetter(headers),
  REJECT: (actions) => actions.reject(),
  PAUSE_AND_RETRY: (actions, decision) => actions.pauseAndRetry(decision.delayMs),
  RETRY_DESTINATION: (actions, decision, headers) =>
    actions.retryLater(decision.tierMs, decision.dueAt, headers),
};

/** Turns a decision into broker actions through one small function per kind. */
export function settleDecision(
  actions: DeliveryActions,
  decision: SettleDecision,
  failureHeaders: Record<string, string>,
): Promise<void> {
  const apply = SETTLE[decision.kind] as (
    a: DeliveryActions,
    d: SettleDecision,
    h: Record<string, string>,
  ) => Promise<void>;
  return apply(actions, decision, failureHeaders);
}
