import { FailureCategory } from '../errors/failure-category';
import { TransportCapabilities } from './transport-capabilities';
import { DeadLetterReason, RetryDecision, RetryDecisionInput } from './retry-decision';
import { decideRetry } from './retry-decision-engine';
import { resolveRetryPolicy } from './retry-policy';
import { RetryMode, RetryOrdering, RetryPolicyOptions } from './retry-policy.interface';

const NOW = new Date('2025-01-01T00:00:00.000Z');
const KAFKA: TransportCapabilities = { orderedStream: true, delayedDelivery: false, retryDestinations: true };
const RABBIT: TransportCapabilities = {
  orderedStream: false,
  delayedDelivery: true,
  retryDestinations: false,
};
const ORDERED_AND_DELAYED: TransportCapabilities = { ...KAFKA, delayedDelivery: true };

/**
 * Attempt 3 with default backoff: base 4000 ms; random 0.7 → floor(0.7 × 4001) = 2800 ms. A TTL queue
 * (broker-delayed) is the largest tier ≤ 2800: 2000 ms; a retry topic the smallest ≥ 2800: 4000 ms.
 */
const PAUSE: RetryDecision = { kind: 'PAUSE_AND_RETRY', delayMs: 2800, nextAttempt: 4 };
const INLINE: RetryDecision = { kind: 'RETRY_INLINE', delayMs: 2800, nextAttempt: 4 };
const DESTINATION: RetryDecision = {
  kind: 'RETRY_DESTINATION',
  delayMs: 2800,
  tierMs: 2000,
  nextAttempt: 4,
  dueAt: new Date(NOW.getTime() + 2800),
};
const TOPIC: RetryDecision = { ...DESTINATION, tierMs: 4000 };
const deadLetter = (reason: DeadLetterReason): RetryDecision => ({ kind: 'DEAD_LETTER', reason });

interface Row {
  name: string;
  policy?: Partial<RetryPolicyOptions> | null;
  category?: FailureCategory;
  attempt?: number;
  ordered?: boolean;
  capabilities?: TransportCapabilities;
  expected: RetryDecision;
}

function input(row: Row): RetryDecisionInput {
  return {
    category: row.category ?? FailureCategory.TRANSIENT,
    attempt: row.attempt ?? 3,
    policy:
      row.policy === null
        ? undefined
        : resolveRetryPolicy({ maxAttempts: 5, mode: RetryMode.INLINE, ...row.policy }),
    destination: { ordered: row.ordered ?? false },
    capabilities: row.capabilities ?? KAFKA,
    now: () => NOW,
    random: () => 0.7,
  };
}

const { PAUSE_PARTITION, RETRY_DESTINATION, BROKER_DELAYED } = RetryMode;
const { ALLOW_REORDER } = RetryOrdering;

describe(decideRetry.name, () => {
  describe('a permanent failure (PermanentError, issue 37 item 4)', () => {
    const modes = Object.values(RetryMode);
    const orderings = Object.values(RetryOrdering);
    const transports = { KAFKA, RABBIT, ORDERED_AND_DELAYED };
    const cases = modes.flatMap((mode) =>
      orderings.flatMap((ordering) =>
        Object.entries(transports).flatMap(([transport, capabilities]) =>
          [true, false].map((ordered) => ({ mode, ordering, transport, capabilities, ordered })),
        ),
      ),
    );

    it.each(cases)(
      'is dead-lettered on its first failure: $mode, $ordering, $transport, ordered $ordered',
      ({ mode, ordering, capabilities, ordered }) => {
        for (const category of Object.values(FailureCategory)) {
          const decision = decideRetry({
            ...input({ name: '', policy: { mode, ordering }, capabilities, ordered, expected: PAUSE }),
            category,
            attempt: 1,
            permanent: true,
          });
          expect(decision).toEqual(deadLetter('NON_RETRYABLE'));
        }
      },
    );

    it("is dropped instead with onNonRetryable: 'REJECT', even for a category the policy retries", () => {
      const decision = decideRetry({
        ...input({
          name: '',
          policy: { onNonRetryable: 'REJECT', retryableCategories: [FailureCategory.VALIDATION] },
          expected: PAUSE,
        }),
        category: FailureCategory.VALIDATION,
        attempt: 1,
        permanent: true,
      });
      expect(decision).toEqual({ kind: 'REJECT', reason: 'NON_RETRYABLE' });
    });

    it('is retried when not permanent (the same VALIDATION failure, as a MessageHandlingError)', () => {
      const base = input({ name: '', policy: { mode: RetryMode.INLINE }, expected: INLINE });
      expect(decideRetry({ ...base, category: FailureCategory.VALIDATION })).toEqual(INLINE);
      expect(decideRetry({ ...base, category: FailureCategory.VALIDATION, permanent: false })).toEqual(
        INLINE,
      );
    });
  });

  describe('decision order', () => {
    it.each<Row>([
      { name: '0: no policy → dead-letter NO_POLICY', policy: null, expected: deadLetter('NO_POLICY') },
      {
        name: '1: non-retryable category → dead-letter NON_RETRYABLE',
        category: FailureCategory.AUTHENTICATION,
        expected: deadLetter('NON_RETRYABLE'),
      },
      {
        name: '1: non-retryable category with onNonRetryable REJECT → REJECT',
        category: FailureCategory.CONFIGURATION,
        policy: { onNonRetryable: 'REJECT' },
        expected: { kind: 'REJECT', reason: 'NON_RETRYABLE' },
      },
      {
        name: '2: attempt = maxAttempts → ATTEMPTS_EXHAUSTED',
        attempt: 5,
        expected: deadLetter('ATTEMPTS_EXHAUSTED'),
      },
      {
        name: '2: maxAttempts 1 → ATTEMPTS_EXHAUSTED on the first delivery',
        attempt: 1,
        policy: { maxAttempts: 1 },
        expected: deadLetter('ATTEMPTS_EXHAUSTED'),
      },
      { name: '3: PRESERVE on an ordered stream → pause (even for INLINE)', ordered: true, expected: PAUSE },
      {
        name: '4: PAUSE_PARTITION on an unordered destination → pause',
        policy: { mode: PAUSE_PARTITION },
        expected: PAUSE,
      },
      {
        name: '4: PAUSE_PARTITION with ALLOW_REORDER → pause',
        policy: { mode: PAUSE_PARTITION, ordering: ALLOW_REORDER },
        ordered: true,
        expected: PAUSE,
      },
      {
        name: '5: RETRY_DESTINATION with ALLOW_REORDER → retry destination',
        policy: { mode: RETRY_DESTINATION, ordering: ALLOW_REORDER },
        ordered: true,
        expected: TOPIC,
      },
      { name: '6: INLINE → retry inline', capabilities: RABBIT, expected: INLINE },
      {
        name: '7: BROKER_DELAYED with delayed delivery → retry destination',
        policy: { mode: BROKER_DELAYED },
        capabilities: RABBIT,
        expected: DESTINATION,
      },
      {
        name: '8: (c) RETRY_DESTINATION + PRESERVE on an unordered destination → NO_RETRY_PATH',
        policy: { mode: RETRY_DESTINATION },
        expected: deadLetter('NO_RETRY_PATH'),
      },
      {
        name: '8: (d) BROKER_DELAYED without delayed delivery → NO_RETRY_PATH',
        policy: { mode: BROKER_DELAYED },
        expected: deadLetter('NO_RETRY_PATH'),
      },
    ])('$name', (row) => {
      expect(decideRetry(input(row))).toEqual(row.expected);
    });
  });

  describe('checked before', () => {
    it.each<Row>([
      {
        name: '(a) retryability before budget: DESERIALIZATION on attempt 1 of 5 → NON_RETRYABLE',
        category: FailureCategory.DESERIALIZATION,
        attempt: 1,
        expected: deadLetter('NON_RETRYABLE'),
      },
      {
        name: '(a) step 1 wins over step 2: DESERIALIZATION on attempt 5 of 5 → NON_RETRYABLE',
        category: FailureCategory.DESERIALIZATION,
        attempt: 5,
        expected: deadLetter('NON_RETRYABLE'),
      },
      {
        name: '(b) order before republishing: RETRY_DESTINATION + PRESERVE on ordered Kafka → pause',
        policy: { mode: RETRY_DESTINATION },
        ordered: true,
        expected: PAUSE,
      },
      {
        name: '(b) order before republishing: BROKER_DELAYED + PRESERVE on an ordered stream → pause',
        policy: { mode: BROKER_DELAYED },
        ordered: true,
        capabilities: ORDERED_AND_DELAYED,
        expected: PAUSE,
      },
      {
        name: '(e) retryableCategories makes DESERIALIZATION retryable',
        category: FailureCategory.DESERIALIZATION,
        policy: { retryableCategories: [FailureCategory.DESERIALIZATION] },
        expected: INLINE,
      },
      {
        name: '(e) nonRetryableCategories makes TRANSIENT non-retryable',
        policy: { nonRetryableCategories: [FailureCategory.TRANSIENT] },
        attempt: 1,
        expected: deadLetter('NON_RETRYABLE'),
      },
      {
        name: '(e) nonRetryableCategories with REJECT → REJECT',
        policy: { nonRetryableCategories: [FailureCategory.TRANSIENT], onNonRetryable: 'REJECT' },
        expected: { kind: 'REJECT', reason: 'NON_RETRYABLE' },
      },
      { name: 'VALIDATION is retryable by default', category: FailureCategory.VALIDATION, expected: INLINE },
    ])('$name', (row) => {
      expect(decideRetry(input(row))).toEqual(row.expected);
    });
  });

  describe('delays', () => {
    const destination = (attempt: number, random: number): RetryDecision =>
      decideRetry({
        ...input({ name: '', policy: { mode: BROKER_DELAYED }, capabilities: RABBIT, expected: INLINE }),
        attempt,
        random: () => random,
      });

    it('waits a jittered delay below every TTL tier inline (broker-delayed)', () => {
      expect(destination(1, 0)).toEqual({ kind: 'RETRY_INLINE', delayMs: 0, nextAttempt: 2 });
      expect(destination(1, 0.1)).toEqual({ kind: 'RETRY_INLINE', delayMs: 100, nextAttempt: 2 });
    });

    it('sends a broker-delayed retry to the largest TTL tier not longer than its delay', () => {
      expect(destination(1, 0.6)).toMatchObject({ kind: 'RETRY_DESTINATION', delayMs: 600, tierMs: 500 });
    });

    it('sends a retry-topic retry to the smallest tier not shorter than its delay', () => {
      const topic = (random: number) =>
        decideRetry({
          ...input({
            name: '',
            policy: { mode: RETRY_DESTINATION, ordering: ALLOW_REORDER },
            expected: INLINE,
          }),
          attempt: 1,
          random: () => random,
        });
      expect(topic(0)).toMatchObject({ delayMs: 0, tierMs: 1000, dueAt: NOW });
      expect(topic(0.6)).toMatchObject({ delayMs: 600, tierMs: 1000 });
    });

    it('reaches the full base delay and its tier at the top of the draw', () => {
      const dueAt = new Date(NOW.getTime() + 8000);
      expect(destination(4, 0.99999999)).toEqual({
        ...DESTINATION,
        delayMs: 8000,
        tierMs: 8000,
        nextAttempt: 5,
        dueAt,
      });
    });

    it('does not draw a random number or read the clock when it dead-letters', () => {
      const random = jest.fn(() => 0.5);
      const now = jest.fn(() => NOW);
      decideRetry({ ...input({ name: '', attempt: 5, expected: INLINE }), random, now });
      expect(random).not.toHaveBeenCalled();
      expect(now).not.toHaveBeenCalled();
    });

    it('is deterministic for the same input', () => {
      const row: Row = { name: '', policy: { mode: BROKER_DELAYED }, capabilities: RABBIT, expected: INLINE };
      expect(decideRetry(input(row))).toEqual(decideRetry(input(row)));
    });
  });
});
