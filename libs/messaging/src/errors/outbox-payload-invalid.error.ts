import { MessagingError } from './messaging.error';

/**
 * `OutboxService.add()` got a payload that breaks the event's schema, or (`relay.mode: 'logical'`) content the
 * outbox table could not hold (U+0000, over jsonb's size limit, a header that is not a string): a bug in the
 * caller.
 */
export class OutboxPayloadInvalidError extends MessagingError {
  constructor(
    /** The event's type. */
    readonly eventType: string,
    /** What was refused, one line per issue (paths and messages, never the payload's values). */
    readonly issues: readonly string[],
  ) {
    super(
      `Payload of ${eventType} cannot be recorded (its schema or the outbox table refuses it): ${issues.join('; ')}. ` +
        'The transaction is rolled back.',
    );
    this.name = 'OutboxPayloadInvalidError';
  }
}
