import fc from 'fast-check';
import { FailureCategory, NON_RETRYABLE_BY_DEFAULT } from '../errors/failure-category';
import { TransportCapabilities } from './transport-capabilities';
import { baseDelay, longestRetryDelay } from './backoff';
import { RetryDecision } from './retry-decision';
import { decideRetry } from './retry-decision-engine';
import { resolveRetryPolicy, retryTiers } from './retry-policy';
import { ResolvedRetryPolicy, RetryMode, RetryOrdering } from './retry-policy.interface';

const NOW = new Date('2026-12-01T00:00:00.000Z');
const CATEGORIES = Object.values(FailureCategory);

/** A valid policy of any shape: modes, orderings, backoffs, category overrides, onNonRetryable. */
const policies: fc.Arbitrary<ResolvedRetryPolicy> = fc
  .record({
    maxAttempts: fc.integer({ min: 1, max: 12 }),
    mode: fc.constantFrom(...Object.values(RetryMode)),
    ordering: fc.constantFrom(...Object.values(RetryOrdering)),
    initialDelayMs: fc.integer({ min: 0, max: 5_000 }),
    multiplier: fc.double({ min: 1, max: 4, noNaN: true }),
    extraMaxDelayMs: fc.integer({ min: 0, max: 60_000 }),
    categories: fc.array(
      fc.tuple(fc.constantFrom(...CATEGORIES), fc.constantFrom('retry', 'never', 'default')),
    ),
    onNonRetryable: fc.constantFrom('DEAD_LETTER' as const, 'REJECT' as const),
  })
  .map((p) => {
    const overrides = new Map(p.categories);
    const listed = (kind: string) => [...overrides].filter(([, k]) => k === kind).map(([c]) => c);
    return resolveRetryPolicy({
      maxAttempts: p.maxAttempts,
      mode: p.mode,
      ordering: p.ordering,
      backoff: {
        initialDelayMs: p.initialDelayMs,
        multiplier: p.multiplier,
        maxDelayMs: p.initialDelayMs + p.extraMaxDelayMs,
      },
      retryableCategories: listed('retry'),
      nonRetryableCategories: listed('never'),
      onNonRetryable: p.onNonRetryable,
    });
  });

const capabilities: fc.Arbitrary<TransportCapabilities> = fc.record({
  orderedStream: fc.boolean(),
  delayedDelivery: fc.boolean(),
  retryDestinations: fc.boolean(),
});

const inputs = fc.record({
  policy: fc.option(policies, { nil: undefined }),
  category: fc.constantFrom(...CATEGORIES),
  attempt: fc.integer({ min: 1, max: 15 }),
  ordered: fc.boolean(),
  capabilities,
  draw: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
});

type Input = typeof inputs extends fc.Arbitrary<infer T> ? T : never;

/** A delay a failure asks for: usually a sane one, sometimes one the engine must ignore. */
const requestedDelays = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 200_000 }) },
  { weight: 1, arbitrary: fc.double({ min: 0, max: 1e12, noNaN: true }) },
  { weight: 1, arbitrary: fc.constantFrom(-1, -0.5, Number.NaN, Number.POSITIVE_INFINITY) },
);

/**
 * The spec's decision order, written out again from SPEC.md (section 3) as plainly as possible, naming only
 * the kind of decision (and the dead-letter reason): what `decideRetry` must agree with.
 */
function specDecision(input: Input): string {
  const { policy, category, attempt, ordered, capabilities: can } = input;
  if (policy === undefined) return 'DEAD_LETTER/NO_POLICY';
  const retryable =
    !policy.nonRetryableCategories.includes(category) &&
    (!NON_RETRYABLE_BY_DEFAULT.includes(category) || policy.retryableCategories.includes(category));
  if (!retryable) return policy.onNonRetryable === 'REJECT' ? 'REJECT' : 'DEAD_LETTER/NON_RETRYABLE';
  if (attempt >= policy.maxAttempts) return 'DEAD_LETTER/ATTEMPTS_EXHAUSTED';
  if (policy.ordering === RetryOrdering.PRESERVE && ordered && can.orderedStream) return 'PAUSE_AND_RETRY';
  if (policy.mode === RetryMode.PAUSE_PARTITION) return 'PAUSE_AND_RETRY';
  if (policy.mode === RetryMode.RETRY_DESTINATION && policy.ordering === RetryOrdering.ALLOW_REORDER) {
    return 'RETRY_DESTINATION';
  }
  if (policy.mode === RetryMode.INLINE) return 'RETRY_INLINE';
  if (policy.mode === RetryMode.BROKER_DELAYED && can.delayedDelivery) return 'RETRY_DESTINATION';
  return 'DEAD_LETTER/NO_RETRY_PATH';
}

function kindOf(decision: RetryDecision): string {
  return decision.kind === 'DEAD_LETTER' ? `DEAD_LETTER/${decision.reason}` : decision.kind;
}

/** The retry decision over random policies, categories, attempts and transport capabilities. */
describe(`${decideRetry.name} (properties)`, () => {
  const decide = (input: Input) =>
    decideRetry({
      category: input.category,
      attempt: input.attempt,
      policy: input.policy,
      destination: { ordered: input.ordered },
      capabilities: input.capabilities,
      now: () => NOW,
      random: () => input.draw,
    });

  it("follows the spec's decision order", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const decision = kindOf(decide(input));
        const expected = specDecision(input);
        // A broker-delayed retry shorter than every TTL tier is waited inline instead (same order of steps).
        if (expected === 'RETRY_DESTINATION' && decision === 'RETRY_INLINE') {
          expect(input.policy?.mode).toBe(RetryMode.BROKER_DELAYED);
        } else {
          expect(decision).toBe(expected);
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('never reorders an ordered destination on a transport that can pause it, unless the policy allows it', () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const { policy, ordered, capabilities: can } = input;
        fc.pre(policy?.ordering === RetryOrdering.PRESERVE && ordered && can.orderedStream);
        expect(decide(input).kind).not.toBe('RETRY_DESTINATION');
      }),
      { numRuns: 1_000 },
    );
  });

  it('waits a full-jitter delay within [0, min(maxDelay, initial × multiplier^(attempt-1))], counts the next attempt, and picks a tier of the policy', () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const decision = decide(input);
        if (decision.kind === 'DEAD_LETTER' || decision.kind === 'REJECT') return;
        const policy = input.policy as ResolvedRetryPolicy;
        const ceiling = baseDelay(policy.backoff, input.attempt);
        expect(ceiling).toBeLessThanOrEqual(policy.backoff.maxDelayMs);
        expect(Number.isInteger(decision.delayMs)).toBe(true);
        expect(decision.delayMs).toBeGreaterThanOrEqual(0);
        expect(decision.delayMs).toBeLessThanOrEqual(ceiling);
        expect(decision.nextAttempt).toBe(input.attempt + 1);
        if (decision.kind !== 'RETRY_DESTINATION') return;
        const tiers = retryTiers(policy);
        expect(tiers).toContain(decision.tierMs);
        expect(decision.dueAt.getTime()).toBe(NOW.getTime() + decision.delayMs);
        // A TTL queue holds the message its whole TTL: never longer than the delay drawn.
        if (policy.mode === RetryMode.BROKER_DELAYED)
          expect(decision.tierMs).toBeLessThanOrEqual(decision.delayMs);
      }),
      { numRuns: 2_000 },
    );
  });

  describe('with a delay the failure asked for (RetryLaterError, Retry-After)', () => {
    const decideAsking = (input: Input, requestedDelayMs: number) =>
      decideRetry({
        category: input.category,
        attempt: input.attempt,
        policy: input.policy,
        destination: { ordered: input.ordered },
        capabilities: input.capabilities,
        now: () => NOW,
        random: () => input.draw,
        requestedDelayMs,
      });
    const usable = (asked: number) => Number.isFinite(asked) && asked >= 0;

    it('changes no step of the decision order: the same kind, attempt and reason as without it', () => {
      fc.assert(
        fc.property(inputs, requestedDelays, (input, asked) => {
          const plain = decide(input);
          const asking = decideAsking(input, asked);
          // A broker-delayed retry is waited inline when its delay is under every TTL tier, with or without.
          const kinds = [plain.kind, asking.kind].map((k) =>
            k === 'RETRY_INLINE' ? 'RETRY_DESTINATION' : k,
          );
          if (input.policy?.mode === RetryMode.BROKER_DELAYED) expect(kinds[1]).toBe(kinds[0]);
          else expect(asking.kind).toBe(plain.kind);
          if (plain.kind === 'DEAD_LETTER') expect(asking).toEqual(plain);
          if ('nextAttempt' in plain && 'nextAttempt' in asking)
            expect(asking.nextAttempt).toBe(plain.nextAttempt);
        }),
        { numRuns: 2_000 },
      );
    });

    it("waits at least what was asked and at most a tenth more, never past the policy's longest delay", () => {
      fc.assert(
        fc.property(inputs, requestedDelays, (input, asked) => {
          const decision = decideAsking(input, asked);
          if (decision.kind === 'DEAD_LETTER' || decision.kind === 'REJECT') return;
          const policy = input.policy as ResolvedRetryPolicy;
          const longest = longestRetryDelay(policy.backoff, policy.maxAttempts);
          expect(Number.isInteger(decision.delayMs)).toBe(true);
          expect(decision.delayMs).toBeLessThanOrEqual(longest);
          expect(decision.delayMs).toBeLessThanOrEqual(policy.backoff.maxDelayMs);
          if (!usable(asked)) {
            expect(decide(input)).toMatchObject({ delayMs: decision.delayMs }); // ignored: the backoff's own draw
            expect(decision.requestedMs).toBeUndefined();
            return;
          }
          expect(decision.requestedMs).toBe(asked);
          const floor = Math.min(Math.floor(asked), longest);
          expect(decision.delayMs).toBeGreaterThanOrEqual(floor);
          expect(decision.delayMs).toBeLessThanOrEqual(Math.max(floor, Math.floor(asked) * 1.1));
        }),
        { numRuns: 2_000 },
      );
    });

    it('picks a tier that can hold the delay: a retry topic not shorter, a TTL queue not longer', () => {
      fc.assert(
        fc.property(inputs, requestedDelays, (input, asked) => {
          const decision = decideAsking(input, asked);
          if (decision.kind !== 'RETRY_DESTINATION') return;
          const policy = input.policy as ResolvedRetryPolicy;
          expect(retryTiers(policy)).toContain(decision.tierMs);
          expect(decision.dueAt.getTime()).toBe(NOW.getTime() + decision.delayMs);
          if (policy.mode === RetryMode.BROKER_DELAYED)
            expect(decision.tierMs).toBeLessThanOrEqual(decision.delayMs);
          else expect(decision.tierMs).toBeGreaterThanOrEqual(decision.delayMs);
        }),
        { numRuns: 2_000 },
      );
    });
  });
});
