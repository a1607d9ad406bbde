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
 * @param random a source of uniform numbers in `[0, 1)`, the injected `Clock`'s `random`.
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
 * The longest delay the policy itself ever waits before a retry: its largest delay tier (the base delay of its
 * last retry, at most `maxDelayMs`). A delay a failure asks for is capped here, so that it fits the retry
 * topics and TTL queues the policy has, and no retry waits longer than the policy would have.
 */
export function longestRetryDelay(backoff: Required<BackoffOptions>, maxAttempts: number): number {
  return Math.max(...delayTiers(backoff, maxAttempts));
}

/**
 * The delay before the next delivery when the failure asked for `requestedMs` (a `RetryLaterError`, a
 * Retry-After): not sooner than asked, spread over up to a tenth more (full jitter on that tenth, so that
 * consumers told the same Retry-After do not all come back in the same instant), and never longer than
 * `longestRetryDelay`. Whole ms.
 */
export function requestedRetryDelayWithin(
  requestedMs: number,
  backoff: Required<BackoffOptions>,
  maxAttempts: number,
  random: () => number,
): number {
  const asked = Math.floor(requestedMs);
  const spread = fullJitter(Math.floor(asked / 10), random);
  return Math.min(longestRetryDelay(backoff, maxAttempts), asked + spread);
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

/** The smallest TTL tier worth a queue of its own: a shorter wait is waited out by the consumer. */
export const MIN_TTL_TIER_MS = 100;

/**
 * The TTL ladder of a broker-delayed retry (RabbitMQ: one queue per tier, since TTLs expire at a queue's
 * head): the largest base delay and its halvings down to `MIN_TTL_TIER_MS`. Any delay up to the largest is
 * a sum of at most one of each (a tier ≤ the delay, then a smaller one for the rest...), so a message can
 * wait exactly its jittered delay, hop by hop, with every queue holding one fixed TTL. Empty when every
 * delay is 0.
 */
export function ttlTiers(backoff: Required<BackoffOptions>, maxAttempts: number): number[] {
  const largest = Math.max(...delayTiers(backoff, maxAttempts));
  const tiers: number[] = [];
  for (let tier = largest; tier > 0 && (tier >= MIN_TTL_TIER_MS || tiers.length === 0); tier /= 2) {
    tiers.unshift(Math.floor(tier));
  }
  return tiers.filter((tier, i) => tier > 0 && tier !== tiers[i - 1]);
}

/** The largest tier ≤ `delayMs`, or undefined when every tier is longer. `tiers` ascending. */
export function tierAtMost(delayMs: number, tiers: readonly number[]): number | undefined {
  let chosen: number | undefined;
  for (const tier of tiers) if (tier <= delayMs) chosen = tier;
  return chosen;
}

/** The smallest tier ≥ `delayMs`, or the largest when none is. `tiers` ascending and non-empty. */
export function tierAtLeast(delayMs: number, tiers: readonly number[]): number {
  if (tiers.length === 0) throw new RangeError('tierAtLeast needs at least one delay tier');
  return tiers.find((tier) => tier >= delayMs) ?? tiers[tiers.length - 1];
}
