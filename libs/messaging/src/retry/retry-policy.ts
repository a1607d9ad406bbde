import { FailureCategory, NON_RETRYABLE_BY_DEFAULT } from '../errors/failure-category';
import { InvalidRetryPolicyError } from '../errors/invalid-retry-policy.error';
import { DEFAULT_BACKOFF, delayTiers, ttlTiers } from './backoff';
import {
  BackoffOptions,
  ResolvedRetryPolicy,
  RetryMode,
  RetryOrdering,
  RetryPolicyOptions,
} from './retry-policy.interface';

const ON_NON_RETRYABLE = ['DEAD_LETTER', 'REJECT'] as const;

/**
 * Validates a declared policy and fills its defaults: ordering PRESERVE, backoff 1000 ms ×2 up to 30000 ms
 * (merged field by field with the declared one), no category overrides, onNonRetryable DEAD_LETTER.
 *
 * @throws InvalidRetryPolicyError naming the first invalid field, its value and what is allowed.
 */
export function resolveRetryPolicy(options: RetryPolicyOptions): ResolvedRetryPolicy {
  const { maxAttempts } = options;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new InvalidRetryPolicyError('maxAttempts', maxAttempts, 'an integer >= 1 (deliveries in all)');
  }
  const mode = oneOf('mode', options.mode, Object.values(RetryMode));
  const ordering = oneOf(
    'ordering',
    options.ordering ?? RetryOrdering.PRESERVE,
    Object.values(RetryOrdering),
  );
  const backoff = resolveBackoff(options.backoff);
  const retryableCategories = resolveCategories('retryableCategories', options.retryableCategories);
  const nonRetryableCategories = resolveCategories('nonRetryableCategories', options.nonRetryableCategories);
  const both = nonRetryableCategories.find((category) => retryableCategories.includes(category));
  if (both !== undefined) {
    const allowed = 'categories not also listed in retryableCategories';
    throw new InvalidRetryPolicyError('nonRetryableCategories', both, allowed);
  }
  const onNonRetryable = oneOf('onNonRetryable', options.onNonRetryable ?? 'DEAD_LETTER', ON_NON_RETRYABLE);
  return Object.freeze({
    maxAttempts,
    mode,
    ordering,
    backoff,
    retryableCategories,
    nonRetryableCategories,
    onNonRetryable,
  });
}

/**
 * Whether a failure of this category may be retried under the policy: not when the policy lists it in
 * `nonRetryableCategories`, nor when it is non-retryable by default and the policy does not list it in
 * `retryableCategories`; otherwise yes.
 */
export function isRetryableCategory(category: FailureCategory, policy: ResolvedRetryPolicy): boolean {
  if (policy.nonRetryableCategories.includes(category)) return false;
  return !NON_RETRYABLE_BY_DEFAULT.includes(category) || policy.retryableCategories.includes(category);
}

function resolveBackoff(backoff: BackoffOptions | undefined): Readonly<Required<BackoffOptions>> {
  const resolved = {
    initialDelayMs: backoff?.initialDelayMs ?? DEFAULT_BACKOFF.initialDelayMs,
    multiplier: backoff?.multiplier ?? DEFAULT_BACKOFF.multiplier,
    maxDelayMs: backoff?.maxDelayMs ?? DEFAULT_BACKOFF.maxDelayMs,
  };
  const { initialDelayMs, multiplier, maxDelayMs } = resolved;
  if (!isFiniteNumber(initialDelayMs) || initialDelayMs < 0) {
    throw new InvalidRetryPolicyError('backoff.initialDelayMs', initialDelayMs, 'a finite number of ms >= 0');
  }
  if (!isFiniteNumber(multiplier) || multiplier < 1) {
    throw new InvalidRetryPolicyError('backoff.multiplier', multiplier, 'a finite number >= 1');
  }
  if (!isFiniteNumber(maxDelayMs) || maxDelayMs < initialDelayMs) {
    const allowed = `a finite number of ms >= backoff.initialDelayMs (${initialDelayMs}; default maxDelayMs is ${DEFAULT_BACKOFF.maxDelayMs})`;
    throw new InvalidRetryPolicyError('backoff.maxDelayMs', maxDelayMs, allowed);
  }
  return Object.freeze(resolved);
}

function resolveCategories(field: string, categories: unknown): readonly FailureCategory[] {
  if (categories === undefined) return Object.freeze([]);
  if (!Array.isArray(categories)) {
    throw new InvalidRetryPolicyError(field, categories, 'an array of FailureCategory values');
  }
  const allowed = Object.values(FailureCategory);
  return Object.freeze(categories.map((category, index) => oneOf(`${field}[${index}]`, category, allowed)));
}

function oneOf<T extends string>(field: string, value: unknown, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) {
    throw new InvalidRetryPolicyError(field, value, `one of ${allowed.join(', ')}`);
  }
  return value as T;
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/**
 * The delay tiers that need a retry destination under the policy: RETRY_DESTINATION, one retry topic per
 * distinct base delay; BROKER_DELAYED, one TTL queue per tier of the TTL ladder; other modes, none.
 */
export function retryTiers(policy: ResolvedRetryPolicy): number[] {
  if (policy.mode === RetryMode.RETRY_DESTINATION) return delayTiers(policy.backoff, policy.maxAttempts);
  if (policy.mode === RetryMode.BROKER_DELAYED) return ttlTiers(policy.backoff, policy.maxAttempts);
  return [];
}
