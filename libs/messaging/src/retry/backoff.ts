import { BackoffOptions } from './retry-policy.interface';

/** The backoff a policy gets when it declares none: 1000 ms, ×2 per attempt, at most 30000 ms. */
export const DEFAULT_BACKOFF: Readonly<Required<BackoffOptions>> = Object.freeze({
  initialDelayMs: 1000,
  multiplier: 2,
  maxDelayMs: 30000,
});

/**
 * How the library's own connection loops back off (subscribing a group again, restarting a crashed Kafka
 * consumer, listening for NOTIFY again): 1000 ms, ×2 per failure, at most 30000 ms, full jitter so that
 * instances that lost the broker together do not all come back in the same instant.
 */
export const RECONNECT_BACKOFF: Readonly<Required<BackoffOptions>> = Object.freeze({
  initialDelayMs: 1000,
  multiplier: 2,
  maxDelayMs: 30000,
});

/**
 * The exponential delay before retrying, before jitter: `min(maxDelayMs, initialDelayMs * multiplier^(attempt-1))`,
 * rounded down to whole ms.
 *
 * @param attempt the 1-based number of the delivery that just failed (1 → `initialDelayMs`); values below 1
 *   count as 1.
 */
export function baseDelay(backoff: Required<BackoffOptions>, attempt: number): number {
  if (backoff.initialDelayMs === 0) return 0; // 0 × Infinity would be NaN on a huge attempt
  const exponent = Math.max(0, attempt - 1);
  return Math.floor(Math.min(backoff.maxDelayMs, backoff.initialDelayMs * backoff.multiplier ** exponent));
}

/**
 * Full jitter: a uniform draw of whole ms from `[0, delayMs]`, both ends reachable. Without it every
 * consumer that failed in the same second retries in the same second and undoes the downstream's recovery.
 *
 * @param random a source of uniform numbers in `[0, 1)`, such as `Math.random`; injected for tests.
 */
export function fullJitter(delayMs: number, random: () => number): number {
  const ceiling = Math.max(0, Math.floor(delayMs));
  return Math.min(ceiling, Math.max(0, Math.floor(random() * (ceiling + 1))));
}

/** The delay before the next delivery: `fullJitter(baseDelay(backoff, attempt))`. */
export function computeRetryDelay(
  backoff: Required<BackoffOptions>,
  attempt: number,
  random: () => number,
): number {
  return fullJitter(baseDelay(backoff, attempt), random);
}

/**
 * The delay ladder: the distinct base delays of attempts `1..maxAttempts-1`, ascending. A broker that
 * cannot delay per message gets one retry destination per tier (a RabbitMQ TTL queue, a Kafka retry
 * topic). Always holds at least one tier, the initial delay, even when `maxAttempts` is 1.
 */
export function delayTiers(backoff: Required<BackoffOptions>, maxAttempts: number): number[] {
  const tiers = [baseDelay(backoff, 1)];
  const constant = backoff.multiplier === 1 || backoff.initialDelayMs === 0;
  for (let attempt = 2; attempt < maxAttempts && !constant; attempt++) {
    const delay = baseDelay(backoff, attempt);
    if (delay !== tiers[tiers.length - 1]) tiers.push(delay);
    if (delay >= backoff.maxDelayMs) break; // capped: every later attempt has the same delay
  }
  return tiers;
}

/**
 * The tier a jittered delay is sent to: the largest tier ≤ `delayMs`, or the smallest tier when `delayMs`
 * is below all of them.
 *
 * Rounded down because each retry queue holds one fixed delay: RabbitMQ expires TTLs only at a queue's
 * head, so no queue may mix delays. Rounding down never waits longer than the backoff asked for, and as
 * jittered delays land on every tier up to their base, retries still spread out.
 *
 * @param tiers ascending and non-empty, as `delayTiers` returns them
 */
export function tierFor(delayMs: number, tiers: readonly number[]): number {
  if (tiers.length === 0) throw new RangeError('tierFor needs at least one delay tier');
  let chosen = tiers[0];
  for (const tier of tiers) {
    if (tier <= delayMs) chosen = tier;
  }
  return chosen;
}
