import { computeRetryDelay, requestedRetryDelayWithin, tierAtLeast, tierAtMost } from './backoff';
import {
  DeadLetterDecision,
  DeadLetterReason,
  RejectDecision,
  RetryDecision,
  RetryDecisionInput,
  RetryDestinationDecision,
  RetryInlineDecision,
} from './retry-decision';
import { isRetryableCategory, retryTiers } from './retry-policy';
import { ResolvedRetryPolicy, RetryMode, RetryOrdering } from './retry-policy.interface';

/** The input once step 0 has established that there is a policy. */
type PolicyInput = RetryDecisionInput & { readonly policy: ResolvedRetryPolicy };

/** One step of the decision order: a decision when it applies, `undefined` to fall through to the next. */
type RetryRule = (input: PolicyInput) => RetryDecision | undefined;

/** Steps 1–7 of the decision order, top to bottom; the first rule that decides wins. */
const RULES: readonly RetryRule[] = Object.freeze([
  nonRetryableCategory, // 1. retryability (a permanent failure's too) before the attempt budget: a bad payload fails the same way every time
  attemptsExhausted, // 2. the budget counts every delivery, the first included
  preserveOrderedStream, // 3. order-preserving before republishing: an ordered destination never reorders
  pausePartition, // 4. pausing keeps order, so it needs no permission to reorder
  retryDestinationAllowingReorder, // 5. a retry destination reorders: only behind ALLOW_REORDER
  inline, // 6. inline retry needs nothing from the transport
  brokerDelayed, // 7. broker-delayed retry only where the broker can hold a message back
]);

/**
 * Decides what to do with a failed delivery, in the spec's order: no policy → dead-letter (step 0), the
 * rules above (steps 1–7), anything else → dead-letter (step 8). A delay the failure asked for
 * (`requestedDelayMs`) replaces the backoff's draw within the policy's bounds; it changes no step. Pure and
 * deterministic: the clock and the random source come with the input.
 */
export function decideRetry(input: RetryDecisionInput): RetryDecision {
  const { policy } = input;
  // 0. Automatic retry is opt-in: without a policy a failure is made visible, not retried.
  if (policy === undefined) return deadLetter('NO_POLICY');
  const withPolicy: PolicyInput = { ...input, policy };
  for (const rule of RULES) {
    const decision = rule(withPolicy);
    if (decision !== undefined) return decision;
  }
  // 8. No path can retry this delivery: park it rather than drop it or loop on it.
  return deadLetter('NO_RETRY_PATH');
}

/**
 * The decision for a message no handler can take: it cannot be decoded, its type is unknown, or its payload
 * breaks the event's schema. The same bytes fail the same way on every delivery, so whatever the mode (and
 * whatever the category's retryability) it is not retried: it is dead-lettered, or dropped when the policy
 * says `onNonRetryable: 'REJECT'`.
 */
export function decideUnprocessable(
  policy: ResolvedRetryPolicy | undefined,
): DeadLetterDecision | RejectDecision {
  return policy?.onNonRetryable === 'REJECT'
    ? { kind: 'REJECT', reason: 'NON_RETRYABLE' }
    : deadLetter('NON_RETRYABLE');
}

function nonRetryableCategory({ category, policy, permanent }: PolicyInput): RetryDecision | undefined {
  if (permanent !== true && isRetryableCategory(category, policy)) return undefined;
  return policy.onNonRetryable === 'REJECT'
    ? { kind: 'REJECT', reason: 'NON_RETRYABLE' }
    : deadLetter('NON_RETRYABLE');
}

function attemptsExhausted({ attempt, policy }: PolicyInput): RetryDecision | undefined {
  return attempt >= policy.maxAttempts ? deadLetter('ATTEMPTS_EXHAUSTED') : undefined;
}

function preserveOrderedStream(input: PolicyInput): RetryDecision | undefined {
  const preserve = input.policy.ordering === RetryOrdering.PRESERVE;
  return preserve && input.destination.ordered && input.capabilities.orderedStream
    ? { kind: 'PAUSE_AND_RETRY', ...nextDelivery(input) }
    : undefined;
}

function pausePartition(input: PolicyInput): RetryDecision | undefined {
  return input.policy.mode === RetryMode.PAUSE_PARTITION
    ? { kind: 'PAUSE_AND_RETRY', ...nextDelivery(input) }
    : undefined;
}

function retryDestinationAllowingReorder(input: PolicyInput): RetryDecision | undefined {
  const { mode, ordering } = input.policy;
  return mode === RetryMode.RETRY_DESTINATION && ordering === RetryOrdering.ALLOW_REORDER
    ? toRetryDestination(input)
    : undefined;
}

function inline(input: PolicyInput): RetryDecision | undefined {
  return input.policy.mode === RetryMode.INLINE
    ? { kind: 'RETRY_INLINE', ...nextDelivery(input) }
    : undefined;
}

function brokerDelayed(input: PolicyInput): RetryDecision | undefined {
  return input.policy.mode === RetryMode.BROKER_DELAYED && input.capabilities.delayedDelivery
    ? toRetryDestination(input)
    : undefined;
}

function deadLetter(reason: DeadLetterReason): DeadLetterDecision {
  return { kind: 'DEAD_LETTER', reason };
}

/**
 * The delay and number of the next delivery: the policy's jittered backoff, or, when the failure asked for a
 * delay, that delay within the policy's bounds (`requestedRetryDelayWithin`).
 */
function nextDelivery(input: PolicyInput): { delayMs: number; nextAttempt: number; requestedMs?: number } {
  const { policy, attempt, random, requestedDelayMs: asked } = input;
  const nextAttempt = attempt + 1;
  if (asked === undefined || !Number.isFinite(asked) || asked < 0) {
    return { delayMs: computeRetryDelay(policy.backoff, attempt, random), nextAttempt };
  }
  const delayMs = requestedRetryDelayWithin(asked, policy.backoff, policy.maxAttempts, random);
  return { delayMs, nextAttempt, requestedMs: asked };
}

/**
 * To the retry destination of the tier that fits the jittered delay, due at now + delay (full jitter kept):
 * - broker-delayed (RabbitMQ TTL queues): the largest tier ≤ the delay, since the broker holds the message
 *   for the whole TTL; the rest is waited in smaller tiers on the way back. A delay under every tier is
 *   waited inline;
 * - retry topics (Kafka): the smallest tier ≥ the delay, since the consumer holds a record until it is due
 *   but never longer than its topic's tier.
 */
function toRetryDestination(input: PolicyInput): RetryDestinationDecision | RetryInlineDecision {
  const next = nextDelivery(input);
  const tiers = retryTiers(input.policy);
  const dueAt = new Date(input.now().getTime() + next.delayMs);
  if (input.policy.mode === RetryMode.BROKER_DELAYED) {
    const tierMs = tierAtMost(next.delayMs, tiers);
    if (tierMs === undefined) return { kind: 'RETRY_INLINE', ...next };
    return { kind: 'RETRY_DESTINATION', ...next, tierMs, dueAt };
  }
  return { kind: 'RETRY_DESTINATION', ...next, tierMs: tierAtLeast(next.delayMs, tiers), dueAt };
}
