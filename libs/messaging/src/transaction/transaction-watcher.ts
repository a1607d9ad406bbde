import { DataSource, EntitySubscriberInterface, QueryFailedError, QueryRunner } from 'typeorm';
import type { AfterQueryEvent, BeforeQueryEvent } from 'typeorm';
import { TransactionFamily, TransactionWatch } from './transaction-watch';

/** MySQL's SERVER_STATUS_IN_TRANS, in the status flags of an OK packet: a transaction is open. */
const SERVER_STATUS_IN_TRANS = 0x0001;

/**
 * Watches the statements of the transactions the library opens (`TransactionHost.begin`), through TypeORM's
 * query events on the DataSource (a subscriber without entities): each failed statement, each command tag.
 * On MySQL and MariaDB it asks the server, after a failed statement only, whether the transaction is still
 * open (`DO 0`: the answer's status flags), since a deadlock ends it without saying so. Statements of other
 * connections and outside these transactions are not looked at.
 */
export class TransactionWatcher implements EntitySubscriberInterface {
  private readonly watches = new WeakMap<QueryRunner, TransactionWatch>();

  /** Subscribes to the DataSource's query events (once); `detach` ends it. */
  attach(dataSource: DataSource): void {
    if (!dataSource.subscribers.includes(this)) dataSource.subscribers.push(this);
  }

  detach(dataSource: DataSource): void {
    const at = dataSource.subscribers.indexOf(this);
    if (at >= 0) dataSource.subscribers.splice(at, 1);
  }

  /** Starts watching the transaction on `queryRunner`; undefined for a database the library cannot judge. */
  watch(queryRunner: QueryRunner, type: string): TransactionWatch | undefined {
    const family = familyOf(type);
    if (!family) return undefined;
    const watch = new TransactionWatch(family);
    this.watches.set(queryRunner, watch);
    return watch;
  }

  unwatch(queryRunner: QueryRunner): void {
    this.watches.delete(queryRunner);
  }

  /** @internal TypeORM's hook: refuses a statement of a transaction the database ended. */
  beforeQuery(event: BeforeQueryEvent): void {
    const watch = this.watched(event.queryRunner);
    if (watch && !watch.probing) watch.beforeStatement(event.query);
  }

  /** @internal TypeORM's hook (awaited before the statement's caller resumes). */
  async afterQuery(event: AfterQueryEvent): Promise<void> {
    const watch = this.watched(event.queryRunner);
    if (!watch || watch.probing) return;
    if (event.success) return watch.succeeded(event.query, event.rawResults);
    const error = new QueryFailedError(event.query, event.parameters as unknown[], event.error);
    if (watch.failed(error)) watch.probed(error, await this.inTransaction(event.queryRunner, watch));
  }

  private watched(queryRunner: QueryRunner | undefined): TransactionWatch | undefined {
    return queryRunner && this.watches.get(queryRunner);
  }

  /** MySQL, MariaDB: whether the server still has the session in a transaction (a lost connection: no). */
  private async inTransaction(queryRunner: QueryRunner, watch: TransactionWatch): Promise<boolean> {
    watch.probing = true;
    try {
      const status = ((await queryRunner.query('DO 0')) as { serverStatus?: number }).serverStatus;
      return status === undefined || (status & SERVER_STATUS_IN_TRANS) !== 0;
    } catch {
      return false;
    } finally {
      watch.probing = false;
    }
  }
}

function familyOf(type: string): TransactionFamily | undefined {
  if (type === 'postgres') return 'postgres';
  return type === 'mysql' || type === 'mariadb' ? 'mysql' : undefined;
}
