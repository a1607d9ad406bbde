import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { RedriveRefusedError } from '../redrive/errors/redrive-refused.error';

/**
 * What a page says when the broker could not be read: a guard's refusal as it is (the library's own words),
 * anything else as a reference into the console's log, never the broker's text (it can name hosts, users,
 * queues a viewer has no business seeing).
 */
export function brokerTrouble(error: unknown, logger: Logger): string {
  if (error instanceof RedriveRefusedError) return error.message;
  const reference = randomBytes(4).toString('hex');
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  logger.error(`The broker could not be read (reference ${reference}): ${text}`);
  return `The broker could not be read (reference ${reference}: the console’s log has the details).`;
}
