import { Logger } from '@nestjs/common';
import { logCreator, logLevel } from 'kafkajs';

/** Routes kafkajs logs into Nest's logger (kafkajs ERROR → warn: it logs every retried request as an error). */
export function kafkaLogCreator(context: string): logCreator {
  const logger = new Logger(context);
  return () =>
    ({ level, log }) => {
      const { message, broker, error } = log as { message: string; broker?: string; error?: string };
      const line = `${message}${broker ? ` [${broker}]` : ''}${error ? `: ${error}` : ''}`;
      if (level === logLevel.ERROR || level === logLevel.WARN) logger.warn(line);
      else if (level === logLevel.INFO) logger.debug(line);
    };
}
