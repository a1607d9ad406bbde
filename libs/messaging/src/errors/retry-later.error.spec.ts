import { ErrorClassifier } from '../retry/error-classifier';
import { FailureCategory } from './failure-category';
import { InvalidRetryDelayError } from './invalid-retry-delay.error';
import { MessageHandlingError } from './message-handling.error';
import { MessagingError } from './messaging.error';
import { RetryLaterError } from './retry-later.error';

describe(RetryLaterError.name, () => {
  it('is a TRANSIENT MessageHandlingError with the code RETRY_LATER unless given one', () => {
    const error = new RetryLaterError(30_000);
    expect(error).toBeInstanceOf(MessageHandlingError);
    expect(error).toBeInstanceOf(MessagingError);
    expect(error).toMatchObject({
      name: 'RetryLaterError',
      category: FailureCategory.TRANSIENT,
      code: 'RETRY_LATER',
      delayMs: 30_000,
      message: 'retry later: in 30000 ms',
    });
    expect(new RetryLaterError(5, { code: 'RATE_LIMITED' }).code).toBe('RATE_LIMITED');
  });

  it('is classified TRANSIENT with its own code', () => {
    const classified = new ErrorClassifier().classify(new RetryLaterError(1, { code: 'QUOTA' }));
    expect(classified).toEqual({ category: FailureCategory.TRANSIENT, code: 'QUOTA' });
  });

  it('keeps a time as retryAt (a copy), and counts the delay from now', () => {
    const at = new Date('2026-12-01T00:01:00.000Z');
    const error = new RetryLaterError(at);
    at.setTime(0);
    expect(error.retryAt?.toISOString()).toBe('2026-12-01T00:01:00.000Z');
    expect(error.delayMs).toBeUndefined();
    expect(error.delayFrom(Date.parse('2026-12-01T00:00:00.000Z'))).toBe(60_000);
    expect(error.delayFrom(Date.parse('2026-12-01T00:05:00.000Z'))).toBe(0);
  });

  it('keeps a cause', () => {
    const cause = new Error('429 from payments');
    expect(new RetryLaterError(1, { cause }).cause).toBe(cause);
  });

  it.each([
    ['a negative delay', -1, '-1'],
    ['NaN', Number.NaN, 'NaN'],
    ['an infinite delay', Number.POSITIVE_INFINITY, 'Infinity'],
    ['an invalid Date', new Date('soon'), 'an invalid Date'],
    ['a string', '30s', '"30s"'],
    ['nothing', undefined, 'undefined'],
  ])(
    'refuses %s with an InvalidRetryDelayError that says what it got and what it takes',
    (_, value, shown) => {
      let thrown: unknown;
      try {
        new RetryLaterError(value as number);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InvalidRetryDelayError);
      expect(thrown).toMatchObject({ name: 'InvalidRetryDelayError', value });
      expect((thrown as Error).message).toContain(`got ${shown}`);
      expect((thrown as Error).message).toContain('a finite number >= 0) or a valid Date');
    },
  );
});
