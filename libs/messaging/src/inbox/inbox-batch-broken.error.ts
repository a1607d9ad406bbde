/**
 * A delivery of an inbox batch failed and the transaction could not be rolled back to its savepoint: the
 * database dropped the whole transaction (a MySQL deadlock, a lost connection), so no delivery of the batch
 * holds. Internal: the pipeline handles each delivery of the batch again on its own.
 */
export class InboxBatchBrokenError extends Error {
  constructor(
    readonly failure: unknown,
    readonly rollbackFailure: unknown,
  ) {
    super(
      `the batch transaction is lost (${(rollbackFailure as Error)?.message ?? String(rollbackFailure)}) after a ` +
        `delivery failed (${(failure as Error)?.message ?? String(failure)})`,
    );
    this.name = 'InboxBatchBrokenError';
  }
}
