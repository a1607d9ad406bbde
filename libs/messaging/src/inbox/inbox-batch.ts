import { OpenTransaction } from '../transaction/transaction-host';
import { TransactionScope } from '../transaction/transaction-scope';
import { InboxDelivery, InboxOutcome, InboxWork } from './inbox-delivery';
import { InboxBatchBrokenError } from './inbox-batch-broken.error';

/** Sets the savepoint, records one delivery and runs its work in the transaction (`InboxService`'s step). */
type RecordAndRun = (
  scope: TransactionScope,
  delivery: InboxDelivery,
  work: InboxWork,
  savepoint: string,
) => Promise<InboxOutcome>;

/**
 * A savepoint name per delivery: a rollback to one that was never set fails (the batch is then lost as a
 * whole), never rolls back an earlier delivery.
 */
const savepointOf = (n: number) => `messaging_delivery_${n}`;

/**
 * Several deliveries' inbox records and handlers in one transaction, one after another, each in a savepoint
 * of its own: a delivery that throws rolls back alone (its writes, its inbox record, its after-commit
 * callbacks) and the others stay. Nothing is durable before `commit()`, so the caller settles nothing of
 * the batch before it. When the savepoint cannot be rolled back to (the database dropped the whole
 * transaction: a MySQL deadlock, a lost connection), `run` throws `InboxBatchBrokenError` and nothing of the
 * batch holds.
 */
export class InboxBatch {
  private deliveries = 0;

  constructor(
    private readonly transaction: OpenTransaction,
    private readonly recordAndRun: RecordAndRun,
  ) {}

  /** How many deliveries ran in the batch so far. */
  get size(): number {
    return this.deliveries;
  }

  /** Like `InboxService.runOnce`, in the batch's transaction; throwing, it has rolled back its own part. */
  async run(delivery: InboxDelivery, work: InboxWork): Promise<InboxOutcome> {
    const { scope } = this.transaction;
    const savepoint = savepointOf((this.deliveries += 1));
    const callbacks = scope.afterCommit.length;
    try {
      return await this.transaction.within(() => this.recordAndRun(scope, delivery, work, savepoint));
    } catch (error) {
      scope.afterCommit.splice(callbacks);
      try {
        await scope.queryRunner.query(`rollback to savepoint ${savepoint}`);
      } catch (rollbackError) {
        throw new InboxBatchBrokenError(error, rollbackError);
      }
      throw error;
    }
  }

  /** Makes every delivery that did not throw durable; throwing, none is. */
  commit(): Promise<void> {
    return this.transaction.commit();
  }

  rollback(): Promise<void> {
    return this.transaction.rollback();
  }
}
