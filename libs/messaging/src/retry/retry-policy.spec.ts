import { FailureCategory } from '../errors/failure-category';
import { InvalidRetryPolicyError } from '../errors/invalid-retry-policy.error';
import { isRetryableCategory, resolveRetryPolicy } from './retry-policy';
import { RetryMode, RetryOrdering } from './retry-policy.interface';

const { DESERIALIZATION, VALIDATION, AUTHENTICATION, AUTHORIZATION, CONFIGURATION, TRANSIENT, UNKNOWN } =
  FailureCategory;

function resolve(overrides: Record<string, unknown>) {
  return resolveRetryPolicy({ maxAttempts: 3, mode: RetryMode.INLINE, ...overrides });
}

describe('retry-policy', () => {
  describe(resolveRetryPolicy.name, () => {
    it('fills every default', () => {
      expect(resolveRetryPolicy({ maxAttempts: 3, mode: RetryMode.PAUSE_PARTITION })).toEqual({
        maxAttempts: 3,
        mode: RetryMode.PAUSE_PARTITION,
        ordering: RetryOrdering.PRESERVE,
        backoff: { initialDelayMs: 1000, multiplier: 2, maxDelayMs: 30000 },
        retryableCategories: [],
        nonRetryableCategories: [],
        onNonRetryable: 'DEAD_LETTER',
      });
    });

    it('merges a partial backoff with the default, field by field', () => {
      expect(resolve({ backoff: { multiplier: 3 } }).backoff).toEqual({
        initialDelayMs: 1000,
        multiplier: 3,
        maxDelayMs: 30000,
      });
    });

    it('keeps what was declared', () => {
      const policy = resolve({
        ordering: RetryOrdering.ALLOW_REORDER,
        backoff: { initialDelayMs: 0, multiplier: 1, maxDelayMs: 0 },
        retryableCategories: [DESERIALIZATION],
        nonRetryableCategories: [TRANSIENT],
        onNonRetryable: 'REJECT',
      });
      expect(policy).toMatchObject({
        ordering: RetryOrdering.ALLOW_REORDER,
        backoff: { initialDelayMs: 0, multiplier: 1, maxDelayMs: 0 },
        retryableCategories: [DESERIALIZATION],
        nonRetryableCategories: [TRANSIENT],
        onNonRetryable: 'REJECT',
      });
    });

    it('returns a frozen policy', () => {
      const policy = resolve({});
      expect(Object.isFrozen(policy)).toBe(true);
      expect(Object.isFrozen(policy.backoff)).toBe(true);
      expect(Object.isFrozen(policy.retryableCategories)).toBe(true);
    });

    it.each<[string, Record<string, unknown>, unknown]>([
      ['maxAttempts', { maxAttempts: 0 }, 0],
      ['maxAttempts', { maxAttempts: 2.5 }, 2.5],
      ['maxAttempts', { maxAttempts: Number.NaN }, Number.NaN],
      ['mode', { mode: 'LATER' }, 'LATER'],
      ['ordering', { ordering: 'SOMETIMES' }, 'SOMETIMES'],
      ['backoff.initialDelayMs', { backoff: { initialDelayMs: -1 } }, -1],
      ['backoff.initialDelayMs', { backoff: { initialDelayMs: Infinity } }, Infinity],
      ['backoff.multiplier', { backoff: { multiplier: 0.5 } }, 0.5],
      ['backoff.multiplier', { backoff: { multiplier: '2' } }, '2'],
      ['backoff.maxDelayMs', { backoff: { initialDelayMs: 1000, maxDelayMs: 999 } }, 999],
      ['backoff.maxDelayMs', { backoff: { initialDelayMs: 60000 } }, 30000],
      ['retryableCategories[1]', { retryableCategories: [VALIDATION, 'FLAKY'] }, 'FLAKY'],
      ['nonRetryableCategories', { nonRetryableCategories: 'TRANSIENT' }, 'TRANSIENT'],
      [
        'nonRetryableCategories',
        { retryableCategories: [UNKNOWN], nonRetryableCategories: [UNKNOWN] },
        UNKNOWN,
      ],
      ['onNonRetryable', { onNonRetryable: 'DROP' }, 'DROP'],
    ])('rejects an invalid %s (%j)', (field, overrides, value) => {
      let thrown: unknown;
      try {
        resolve(overrides);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InvalidRetryPolicyError);
      expect(thrown).toMatchObject({ name: 'InvalidRetryPolicyError', field, value });
      expect((thrown as Error).message).toContain(field);
      expect((thrown as Error).message).toMatch(/expected .+/);
    });
  });

  describe(isRetryableCategory.name, () => {
    it.each<[FailureCategory, Record<string, unknown>, boolean]>([
      [DESERIALIZATION, {}, false],
      [VALIDATION, {}, true],
      [AUTHENTICATION, {}, false],
      [AUTHORIZATION, {}, false],
      [CONFIGURATION, {}, false],
      [TRANSIENT, {}, true],
      [UNKNOWN, {}, true],
      [AUTHENTICATION, { retryableCategories: [AUTHENTICATION] }, true],
      [CONFIGURATION, { retryableCategories: [AUTHENTICATION] }, false],
      [UNKNOWN, { nonRetryableCategories: [UNKNOWN] }, false],
      [DESERIALIZATION, { nonRetryableCategories: [DESERIALIZATION] }, false],
    ])('%s with %j → %p', (category, overrides, expected) => {
      expect(isRetryableCategory(category, resolve(overrides))).toBe(expected);
    });
  });
});
