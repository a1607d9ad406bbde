import { destinationNames } from '../topology/destination-names';
import { DeadLetterCopyPolicy, deadLetterCopy, retryCopy } from '../failure/failure-copy';
import { FailureCategory } from '../errors/failure-category';
import { WireMessage } from '../envelope/wire-message';
import { RetryDecision } from '../retry/retry-decision';
import { Delivery, Settlement } from '../transports/delivery-contract';

/** A failure, classified: what the retry engine and the dead-letter headers need. */
export interface Failure {
  readonly category: FailureCategory;
  readonly code: string;
  readonly messageId?: string;
  /** For the log line only (never copied into a message). */
  readonly detail?: string;
}

/** A decision that ends the delivery's handling here (an inline retry does not). */
export type SettleDecision = Exclude<RetryDecision, { kind: 'RETRY_INLINE' }>;

/** What turning a decision into a settlement needs. */
export interface SettleContext {
  readonly group: string;
  readonly delivery: Delivery;
  /** The failure headers a copy gets. */
  readonly failureHeaders: Record<string, string>;
  /** What a dead-letter copy keeps (allowlisted headers, the key's keyed pseudonym, the sealed key). */
  readonly deadLetterPolicy: () => DeadLetterCopyPolicy;
  /** Publishes a copy; true once the broker confirmed it, false when the consumer stopped first. */
  readonly publishConfirmed: (copy: WireMessage) => Promise<boolean>;
}

export const ACK: Settlement = Object.freeze({ kind: 'ACK' });
export const DROP: Settlement = Object.freeze({ kind: 'DROP' });
export const LEAVE: Settlement = Object.freeze({ kind: 'LEAVE' });

const SETTLE: {
  [K in SettleDecision['kind']]: (
    context: SettleContext,
    decision: Extract<SettleDecision, { kind: K }>,
  ) => Promise<Settlement>;
} = {
  DEAD_LETTER: ({ group, delivery: { wire }, failureHeaders, deadLetterPolicy, publishConfirmed }) =>
    copyThenAck(
      publishConfirmed,
      deadLetterCopy(
        wire,
        destinationNames.deadLetter(wire.destination, group),
        failureHeaders,
        deadLetterPolicy(),
      ),
    ),
  RETRY_DESTINATION: ({ group, delivery: { wire }, failureHeaders, publishConfirmed }, decision) =>
    copyThenAck(
      publishConfirmed,
      retryCopy(
        wire,
        destinationNames.retry(wire.destination, group, decision.tierMs),
        failureHeaders,
        decision.dueAt,
      ),
    ),
  REJECT: async () => DROP,
  PAUSE_AND_RETRY: async (_context, decision) => ({ kind: 'PAUSE', delayMs: decision.delayMs }),
};

/**
 * Turns a decision into a settlement, one small function per kind: a dead-letter or retry copy is built,
 * published and confirmed here, and only then is the source acked (publish → confirm → settle); a copy
 * not confirmed before the consumer stops leaves the source unsettled.
 */
export function settleDecision(context: SettleContext, decision: SettleDecision): Promise<Settlement> {
  const apply = SETTLE[decision.kind] as (c: SettleContext, d: SettleDecision) => Promise<Settlement>;
  return apply(context, decision);
}

async function copyThenAck(
  publishConfirmed: (copy: WireMessage) => Promise<boolean>,
  copy: WireMessage,
): Promise<Settlement> {
  return (await publishConfirmed(copy)) ? ACK : LEAVE;
}
