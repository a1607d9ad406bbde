import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource } from 'typeorm';
import { TransactionHost } from '../transaction/transaction-host';
import { TransactionScope } from '../transaction/transaction-scope';

/**
 * The transactions of one tenant's DataSource: a `TransactionHost` whose work also runs with its tenant as
 * the current one (`MessagingTenants.current()`), so that a handler applying a tenant's message, or an
 * `@Outbox()` method, records what it publishes in that tenant's outbox, in the same transaction.
 */
export class TenantTransactionHost extends TransactionHost {
  constructor(
    dataSource: DataSource,
    /** The tenant it belongs to. */
    readonly tenant: string,
    private readonly context: AsyncLocalStorage<string>,
  ) {
    super(dataSource);
  }

  protected override enter<T>(scope: TransactionScope, work: () => Promise<T>): Promise<T> {
    return this.context.run(this.tenant, () => super.enter(scope, work));
  }
}
