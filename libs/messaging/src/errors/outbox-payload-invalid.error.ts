import { MessagingError } from './messaging.error';

/** `OutboxService.add()` got a payload that breaks the event's schema: a bug in the caller. */
export class OutboxPayloadInvalidError extends MessagingError {
  constructor(
    /** The event's type. */
    readonly eventType: string,
    /** What the schema refused, one line per issue (paths and messages, never the payload's values). */
    readonly issues: readonly string[],
  ) {
    super(`Payload of ${eventType} breaks its schema: ${issues.join('; ')}. The transaction is rolled back.`);
    this.name = 'OutboxPayloadInvalidError';
  }
}
