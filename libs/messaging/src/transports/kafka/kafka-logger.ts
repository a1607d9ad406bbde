import { Logger } from '@nestjs/common';
import { logCreator, logLevel } from 'kafkajs';
import { OutageLog } from '../outage-log';

/**
 * kafkajs warns "Limiting retries for the idempotent producer may invalidate EoS guarantees" each time an
 * idempotent producer is created with fewer than its maximum retries, which the library does on purpose (a
 * failed send drops the producer, and the relay retries with a new one): at every start and after every
 * broker error. It is about the broker's duplicate detection, not about losing messages: a send that fails is
 * retried from the outbox, and a copy the broker may then hold twice is absorbed by the consumer's inbox
 * (guide chapter 3, "Kafka: the idempotent producer's warning"). Nothing for an operator to act on, and Nest's
 * default logger prints debug lines: not logged at all.
 */
const EXPECTED_WARNINGS = [/^Limiting retries for the idempotent producer/];

/**
 * Routes kafkajs logs into Nest's logger: INFO to debug, WARN to warn (but warnings the library's own settings
 * cause are dropped), ERROR (kafkajs logs every failed connection and retried request as one) to warn, or, given
 * an `OutageLog`, to it: one line when errors start, a summary while they go on.
 */
export function kafkaLogCreator(context: string, outage?: OutageLog): logCreator {
  const logger = new Logger(context);
  return () =>
    ({ level, log }) => {
      const { message, broker, error } = log as { message: string; broker?: string; error?: string };
      const line = `${message}${broker ? ` [${broker}]` : ''}${error ? `: ${error}` : ''}`;
      if (level === logLevel.ERROR && outage) outage.failure(line);
      else if (level === logLevel.WARN && EXPECTED_WARNINGS.some((w) => w.test(message))) return;
      else if (level === logLevel.ERROR || level === logLevel.WARN) logger.warn(line);
      else if (level === logLevel.INFO) logger.debug(line);
    };
}
