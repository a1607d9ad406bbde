import { MessagingError } from './messaging.error';

/**
 * `OutboxService.add()` was given a `messageId` that the outbox or the table of scheduled messages holds
 * already (pending, kept after its publish, or waiting to be due): a bug in the caller, or a retried request
 * whose first attempt committed. Nothing of this call is written; the transaction is the caller's to roll back
 * (on PostgreSQL an unscheduled add's refusal comes from the unique index, which has aborted it).
 */
export class DuplicateMessageIdError extends MessagingError {
  constructor(
    /** The id given twice. */
    readonly messageId: string,
    /** The event's type. */
    readonly eventType: string,
    /** The database's refusal, when it was its unique index that refused. */
    cause?: unknown,
  ) {
    super(
      `Cannot add ${eventType}: message id ${messageId} is taken (the outbox or the scheduled messages hold it ` +
        'already). Give each message an id of its own, or leave messageId out for a new one.',
      cause === undefined ? undefined : { cause },
    );
    this.name = 'DuplicateMessageIdError';
  }
}
