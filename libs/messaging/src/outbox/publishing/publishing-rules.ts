import { computeRetryDelay } from '../../retry/backoff';

/** The relay options the publishing rules read (`relay.*`). */
export interface PublishingOptions {
  readonly batchSize: number;
  readonly retryInitialDelayMs: number;
  readonly retryMaxDelayMs: number;
}

/** When a message that keeps failing is parked (taken out of the stream, kept where an operator sees it). */
export interface ParkRule {
  /** Failures of the message's own (see `countsAsOwnFailure`) after which it is parked. */
  readonly afterFailures: number;
  /** Or this long after its first failure of its own, whatever their number (a slow AMBIGUOUS each time). */
  readonly afterMs: number;
}

/**
 * The defaults: five failures of its own, or a minute after the first one. A REJECTED and an AMBIGUOUS count
 * alike: a message over RabbitMQ's `max_message_size` closes the channel (AMBIGUOUS) every time, a Kafka
 * partition without a leader answers a retriable error (AMBIGUOUS) for as long as it lasts.
 */
export const DEFAULT_PARK_RULE: ParkRule = Object.freeze({ afterFailures: 5, afterMs: 60_000 });

/** Batches a relay may have on the wire at once: the next one goes (and is encoded) while the broker confirms the previous. */
export const MAX_IN_FLIGHT_BATCHES = 2;

/**
 * How much a relay that reads ahead of the broker may hold in memory, in `relay.batchSize`s: every message
 * read and not yet forgotten (done ones waiting behind one that is not included) plus every source unit
 * (a transaction, with or without messages). Reading pauses at this and resumes below half of it.
 */
export const RETAINED_BATCHES = 10;

/** How long a publish may wait for the broker's confirmations before its outcomes are AMBIGUOUS. */
export const PUBLISH_TIMEOUT_MS = 15_000;

/**
 * Whether a failure counts toward parking the message: only while the broker answers (`brokerUp`: something
 * was confirmed, or the transport's health check reached it) and only when the message went alone, so that
 * the failure is its own. A message that failed in a batch of several goes alone next time (`goesAlone`).
 */
export function countsAsOwnFailure(batchSize: number, brokerUp: boolean): boolean {
  return brokerUp && batchSize === 1;
}

/** Whether a message that failed in company goes alone from now on (only while the broker answers). */
export function goesAlone(batchSize: number, brokerUp: boolean): boolean {
  return brokerUp && batchSize > 1;
}

/** Whether a message with `failures` of its own, the first at `firstFailureAt`, is to be parked at `now`. */
export function shouldPark(
  failures: number,
  firstFailureAt: number | undefined,
  now: number,
  rule: ParkRule = DEFAULT_PARK_RULE,
): boolean {
  if (failures <= 0) return false;
  return (
    failures >= rule.afterFailures || (firstFailureAt !== undefined && now - firstFailureAt >= rule.afterMs)
  );
}

/**
 * The backoff before a message (or a relay, after a round in which the broker confirmed nothing) tries again:
 * `relay.retryInitialDelayMs` doubling per attempt up to `relay.retryMaxDelayMs`, full jitter.
 */
export function publishRetryDelay(
  options: PublishingOptions,
  attempts: number,
  random: () => number,
): number {
  const backoff = {
    initialDelayMs: options.retryInitialDelayMs,
    multiplier: 2,
    maxDelayMs: options.retryMaxDelayMs,
  };
  return computeRetryDelay(backoff, Math.max(1, attempts), random);
}

/** What a relay that reads ahead may hold in memory before it stops reading (see `RETAINED_BATCHES`). */
export function retainedLimit(options: Pick<PublishingOptions, 'batchSize'>): number {
  return options.batchSize * RETAINED_BATCHES;
}
