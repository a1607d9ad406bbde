export { RetryMode, RetryOrdering } from './retry-policy.interface';
export type { BackoffOptions, ResolvedRetryPolicy, RetryPolicyOptions } from './retry-policy.interface';
export { isRetryableCategory, resolveRetryPolicy } from './retry-policy';
export { baseDelay, computeRetryDelay, DEFAULT_BACKOFF, delayTiers, fullJitter } from './backoff';
export { decideRetry } from './retry-decision-engine';
export type {
  DeadLetterDecision,
  DeadLetterReason,
  PauseAndRetryDecision,
  RejectDecision,
  RetryDecision,
  RetryDecisionInput,
  RetryDestinationDecision,
  RetryInlineDecision,
} from './retry-decision';
export { ErrorClassifier } from './error-classifier';
export type { Classification, ClassificationRule } from './error-classifier';
export { unsupportedPolicyReason } from './policy-support';
