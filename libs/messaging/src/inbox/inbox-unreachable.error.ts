/**
 * The inbox's transaction could not begin: no connection, or the database refused or dropped it before BEGIN
 * answered. Nothing ran, no handler was called: the consumer waits for the database instead of spending the
 * message's attempts (internal; the `cause` is the driver's error).
 */
export class InboxUnreachableError extends Error {
  constructor(cause: unknown) {
    super('the inbox transaction could not begin', { cause });
    this.name = 'InboxUnreachableError';
  }
}
