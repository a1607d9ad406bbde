import { MessagingError } from './messaging.error';

/** Something that must write in the caller's transaction was called outside one. */
export class NoActiveTransactionError extends MessagingError {
  constructor(
    /** What was called, e.g. `OutboxService.add()`. */
    readonly operation: string,
  ) {
    super(
      `${operation} must run inside a transaction: decorate the calling method with @Outbox() ` +
        `(or wrap the call in TransactionHost.run()) so that the message commits with your business data.`,
    );
    this.name = 'NoActiveTransactionError';
  }
}
