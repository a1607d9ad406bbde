import { OpenTransaction } from '../transaction/transaction-host';
import { InboxOutcome, InboxWork } from './inbox-delivery';

/** What the inbox found for one delivery of a batch: its outcome, and its failed attempts before. */
export interface InboxEntry {
  readonly outcome: InboxOutcome;
  readonly failedBefore: number;
}

/**
 * Several deliveries in one transaction, their inbox records written together when it began
 * (`InboxService.begin`): each delivery recorded now runs its work in the transaction, one after another.
 * No savepoints: a delivery whose work throws spoils the batch, which the caller rolls back as a whole
 * (and runs again without that delivery). So does one whose work swallowed a database error that ended the
 * transaction: its `run` throws a `TransactionAbortedError`. Nothing is durable before `commit()`, so the
 * caller settles nothing of the batch before it.
 */
export class InboxBatch {
  constructor(
    private readonly transaction: OpenTransaction,
    /** In the order of the deliveries given to `begin`. */
    readonly entries: readonly InboxEntry[],
  ) {}

  /**
   * Runs the work of the batch's delivery number `index` in the transaction when it was recorded now
   * (HANDLED), not when the inbox had it already; returns its outcome. The after-commit callbacks the work
   * registers go to `afterCommit` (they run after the batch's commit). Throwing, the batch must roll back.
   */
  async run(index: number, work: InboxWork, afterCommit: Array<() => void> = []): Promise<InboxOutcome> {
    const { outcome, failedBefore } = this.entries[index];
    if (outcome === 'HANDLED') {
      const { transaction } = this;
      await transaction.within(() => work({ ...transaction.scope, afterCommit }, failedBefore), afterCommit);
    }
    return outcome;
  }

  /**
   * Makes the whole batch durable, then runs its after-commit callbacks. Throwing, none ran, and the batch
   * is not durable, or its outcome is unknown (the answer to COMMIT was lost: the inbox knows).
   */
  commit(): Promise<void> {
    return this.transaction.commit();
  }

  /** Drops the whole batch (never throws); `'connection-lost'` when its connection was found broken. */
  rollback(): Promise<'rolled-back' | 'connection-lost'> {
    return this.transaction.rollback();
  }
}
