/** `OutboxService.add()` got a payload that breaks the event's schema: a bug in the caller. */
export class OutboxPayloadInvalidError extends Error {
  constructor(
    readonly eventType: string,
    readonly issues: readonly string[],
  ) {
    super(`Payload of ${eventType} breaks its schema: ${issues.join('; ')}. The transaction is rolled back.`);
    this.name = 'OutboxPayloadInvalidError';
  }
}
