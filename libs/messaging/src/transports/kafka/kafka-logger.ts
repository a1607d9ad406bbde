import { Logger } from '@nestjs/common';
import { logCreator, logLevel } from 'kafkajs';
import { OutageLog } from '../outage-log';

/**
 * Routes kafkajs logs into Nest's logger: INFO to debug, WARN to warn, ERROR (kafkajs logs every failed
 * connection and retried request as one) to warn, or, given an `OutageLog`, to it: one line when errors
 * start, a summary while they go on.
 */
export function kafkaLogCreator(context: string, outage?: OutageLog): logCreator {
  const logger = new Logger(context);
  return () =>
    ({ level, log }) => {
      const { message, broker, error } = log as { message: string; broker?: string; error?: string };
      const line = `${message}${broker ? ` [${broker}]` : ''}${error ? `: ${error}` : ''}`;
      if (level === logLevel.ERROR && outage) outage.failure(line);
      else if (level === logLevel.ERROR || level === logLevel.WARN) logger.warn(line);
      else if (level === logLevel.INFO) logger.debug(line);
    };
}
