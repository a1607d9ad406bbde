import fc from 'fast-check';
import { FailureCategory } from '../errors/failure-category';
import { decideHold, HoldDecisionInput } from './hold-decision';
import { resolveRetryPolicy } from './retry-policy';
import { RetryMode } from './retry-policy.interface';
import { TransportCapabilities } from './transport-capabilities';

const KAFKA: TransportCapabilities = { orderedStream: true, delayedDelivery: false, retryDestinations: true };
const RABBITMQ: TransportCapabilities = {
  orderedStream: false,
  delayedDelivery: true,
  retryDestinations: false,
};
const WINDOW = { windowMs: 1_500_000, initialDelayMs: 1_000, maxDelayMs: 60_000 };

function input(overrides: Partial<HoldDecisionInput> = {}): HoldDecisionInput {
  return {
    category: FailureCategory.VALIDATION,
    heldForMs: 0,
    hold: 1,
    window: WINDOW,
    capabilities: KAFKA,
    random: () => 0.5,
    ...overrides,
  };
}

/** Held messages never dropped at the window's end, whatever the policy. */
const KEPT: readonly FailureCategory[] = [FailureCategory.UPCAST, FailureCategory.CONFIGURATION];

describe(decideHold.name, () => {
  it('pauses an ordered stream (Kafka) and waits elsewhere (RabbitMQ), for a full-jitter backoff', () => {
    expect(decideHold(input())).toEqual({ kind: 'HOLD', how: 'PAUSE', delayMs: 500 });
    expect(decideHold(input({ capabilities: RABBITMQ, hold: 3 }))).toEqual({
      kind: 'HOLD',
      how: 'WAIT',
      delayMs: 2_000,
    });
    expect(decideHold(input({ hold: 30, random: () => 0.999_999 })).kind === 'HOLD').toBe(true);
    expect(decideHold(input({ hold: 30, random: () => 0.999_999 }))).toMatchObject({ delayMs: 60_000 });
  });

  it("cuts the wait at the window's end", () => {
    expect(decideHold(input({ heldForMs: WINDOW.windowMs - 10, hold: 20 }))).toMatchObject({ delayMs: 10 });
  });

  it('dead-letters once the window is over (HOLD_EXPIRED), and at once with a window of 0', () => {
    const expired = { kind: 'DEAD_LETTER', reason: 'HOLD_EXPIRED' };
    expect(decideHold(input({ heldForMs: WINDOW.windowMs }))).toEqual(expired);
    expect(decideHold(input({ window: { ...WINDOW, windowMs: 0 } }))).toEqual(expired);
  });

  it('drops a VALIDATION one at the end when the policy says REJECT, never an UPCAST one', () => {
    const policy = resolveRetryPolicy({ maxAttempts: 3, mode: RetryMode.INLINE, onNonRetryable: 'REJECT' });
    const end = { heldForMs: WINDOW.windowMs, policy };
    expect(decideHold(input(end))).toEqual({ kind: 'REJECT', reason: 'NON_RETRYABLE' });
    expect(decideHold(input({ ...end, category: FailureCategory.UPCAST }))).toEqual({
      kind: 'DEAD_LETTER',
      reason: 'HOLD_EXPIRED',
    });
  });

  describe('(properties)', () => {
    const inputs = fc.record({
      category: fc.constantFrom(...Object.values(FailureCategory)),
      heldForMs: fc.integer({ min: -10, max: 3_000_000 }),
      hold: fc.integer({ min: 1, max: 200 }),
      windowMs: fc.integer({ min: 0, max: 2_000_000 }),
      initialDelayMs: fc.integer({ min: 1, max: 10_000 }),
      extraMaxDelayMs: fc.integer({ min: 0, max: 100_000 }),
      ordered: fc.boolean(),
      reject: fc.boolean(),
      draw: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
    });
    const decide = (i: typeof inputs extends fc.Arbitrary<infer T> ? T : never) =>
      decideHold({
        category: i.category,
        heldForMs: i.heldForMs,
        hold: i.hold,
        window: {
          windowMs: i.windowMs,
          initialDelayMs: i.initialDelayMs,
          maxDelayMs: i.initialDelayMs + i.extraMaxDelayMs,
        },
        policy: i.reject
          ? resolveRetryPolicy({ maxAttempts: 2, mode: RetryMode.INLINE, onNonRetryable: 'REJECT' })
          : undefined,
        capabilities: { ...RABBITMQ, orderedStream: i.ordered },
        random: () => i.draw,
      });

    it('holds within the window, for a whole-ms wait in [0, maxDelayMs] that never passes its end; after it never holds', () => {
      fc.assert(
        fc.property(inputs, (i) => {
          const decision = decide(i);
          const left = i.windowMs - Math.max(0, i.heldForMs);
          if (left <= 0) {
            expect(decision.kind).not.toBe('HOLD');
            return;
          }
          expect(decision.kind).toBe('HOLD');
          if (decision.kind !== 'HOLD') return;
          expect(decision.how).toBe(i.ordered ? 'PAUSE' : 'WAIT');
          expect(Number.isInteger(decision.delayMs)).toBe(true);
          expect(decision.delayMs).toBeGreaterThanOrEqual(0);
          expect(decision.delayMs).toBeLessThanOrEqual(i.initialDelayMs + i.extraMaxDelayMs);
          expect(decision.delayMs).toBeLessThanOrEqual(left);
        }),
        { numRuns: 2_000 },
      );
    });

    it('ends in a dead letter, or a drop only under REJECT: an UPCAST or CONFIGURATION (unknown tenant) one is never dropped', () => {
      fc.assert(
        fc.property(inputs, (i) => {
          const decision = decide(i);
          if (decision.kind === 'HOLD') return;
          if (decision.kind === 'REJECT') {
            expect(i.reject).toBe(true);
            expect(KEPT).not.toContain(i.category);
          } else {
            expect(decision).toEqual({ kind: 'DEAD_LETTER', reason: 'HOLD_EXPIRED' });
            expect(i.reject && !KEPT.includes(i.category)).toBe(false);
          }
        }),
        { numRuns: 2_000 },
      );
    });
  });
});
