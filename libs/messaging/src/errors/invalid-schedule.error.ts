import { MessagingError } from './messaging.error';

/**
 * `OutboxService.add()` got a `deliverAt` or `delayMs` it cannot schedule (not a date, not a finite number,
 * negative, both, too far ahead), or the relay mode cannot deliver scheduled messages: a bug in the caller.
 * Thrown before anything is written; the transaction is the caller's to roll back.
 */
export class InvalidScheduleError extends MessagingError {
  constructor(
    /** The event's type. */
    readonly eventType: string,
    /** What is wrong, and how to fix it. */
    readonly reason: string,
  ) {
    super(`Cannot schedule ${eventType}: ${reason}`);
    this.name = 'InvalidScheduleError';
  }
}
