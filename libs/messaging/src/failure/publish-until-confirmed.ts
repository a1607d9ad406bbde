import { Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { WireMessage } from '../envelope/wire-message';
import { computeRetryDelay } from '../retry/backoff';
import { BackoffOptions } from '../retry/retry-policy.interface';
import { PublishOutcome } from '../transports/publish-outcome';

/** Between tries of one copy: 200 ms, ×2, at most 10 s, full jitter. */
export const REPUBLISH_BACKOFF: Readonly<Required<BackoffOptions>> = Object.freeze({
  initialDelayMs: 200,
  multiplier: 2,
  maxDelayMs: 10_000,
});
/** The longest a wait between tries goes without a keep-alive (Kafka heartbeats). */
const KEEP_ALIVE_EVERY_MS = 1_000;

/** Options of `publishUntilConfirmed()`. */
export interface PublishUntilConfirmedOptions {
  readonly clock: Clock;
  /** True once the consumer stops: then the copy is given up and the source stays unsettled. */
  readonly isStopping: () => boolean;
  /** Called while waiting (Kafka heartbeats). */
  readonly keepAlive: () => Promise<void>;
  readonly log: Logger;
}

/**
 * Publishes one copy (dead-letter or retry) and waits for the broker's confirmation, trying again with
 * backoff while it is REJECTED or AMBIGUOUS. Resolves true once confirmed, false when the consumer stopped
 * first. The caller settles the source only after a true: publish, confirm, then settle. An AMBIGUOUS
 * try may leave a duplicate copy: visible, unlike a loss.
 */
export async function publishUntilConfirmed(
  publish: (copies: readonly WireMessage[]) => Promise<PublishOutcome[]>,
  copy: WireMessage,
  options: PublishUntilConfirmedOptions,
): Promise<boolean> {
  const { clock } = options;
  for (let attempt = 1; ; attempt++) {
    if (options.isStopping()) return false;
    const [outcome] = await publish([copy]);
    if (outcome.status === 'CONFIRMED') return true;
    const delay = computeRetryDelay(REPUBLISH_BACKOFF, attempt, () => clock.random());
    options.log.warn(
      `Publishing to ${copy.destination} was ${outcome.status} (${outcome.error.message}); the source message ` +
        `stays unsettled, trying again in ${delay} ms.`,
    );
    const until = clock.now() + delay;
    while (clock.now() < until && !options.isStopping()) {
      await clock.sleep(Math.min(KEEP_ALIVE_EVERY_MS, until - clock.now()));
      await options.keepAlive();
    }
  }
}
