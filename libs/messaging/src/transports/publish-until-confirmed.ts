import { Logger } from '@nestjs/common';
import { WireMessage } from '../envelope/wire-message';
import { fullJitter } from '../retry/backoff';
import { PublishOutcome } from './publish-outcome';

/** The consumer stopped before a dead-letter or retry copy was confirmed: the source stays unsettled. */
export class StoppedError extends Error {
  constructor(readonly destination: string) {
    super(`Stopped before ${destination} confirmed the copy; the source message stays unsettled.`);
    this.name = 'StoppedError';
  }
}

/** Options of `publishUntilConfirmed()`. */
export interface PublishUntilConfirmedOptions {
  readonly isStopping: () => boolean;
  /** Called while waiting (Kafka heartbeats). */
  readonly keepAlive: () => Promise<void>;
  readonly log: Logger;
}

/**
 * Publishes one copy (dead-letter or retry) and waits for the broker's confirmation, trying again with
 * backoff while it is REJECTED or AMBIGUOUS. The caller settles the source only after this resolves: publish,
 * confirm, then settle. An AMBIGUOUS attempt may leave a duplicate copy: visible, unlike a loss.
 */
export async function publishUntilConfirmed(
  publish: (messages: readonly WireMessage[]) => Promise<PublishOutcome[]>,
  copy: WireMessage,
  options: PublishUntilConfirmedOptions,
): Promise<void> {
  for (let failures = 0; ; failures++) {
    if (options.isStopping()) throw new StoppedError(copy.destination);
    const [outcome] = await publish([copy]);
    if (outcome.status === 'CONFIRMED') return;
    const delay = fullJitter(Math.min(10_000, 200 * 2 ** Math.min(failures, 10)), Math.random);
    options.log.warn(
      `Publishing to ${copy.destination} was ${outcome.status} (${outcome.error.message}); the source message ` +
        `stays unsettled, trying again in ${delay} ms.`,
    );
    const until = Date.now() + delay;
    while (Date.now() < until && !options.isStopping()) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, until - Date.now())));
      await options.keepAlive();
    }
  }
}
