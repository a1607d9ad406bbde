import { AsyncLocalStorage } from 'node:async_hooks';
import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { IsolationLevel } from 'typeorm/driver/types/IsolationLevel';
import { MESSAGING_DATA_SOURCE } from '../messaging.constants';
import { NoActiveTransactionError } from '../errors/no-active-transaction.error';
import { TransactionAbortedError } from '../errors/transaction-aborted.error';
import { joinDefaultManager } from './typeorm-default-manager.patch';
import { TransactionScope } from './transaction-scope';
import { TransactionWatch } from './transaction-watch';
import { TransactionWatcher } from './transaction-watcher';

/** Options of `TransactionHost.run()`. */
export interface RunInTransactionOptions {
  /** Isolation level of a new transaction. Default: the database's (READ COMMITTED on PostgreSQL). */
  isolation?: IsolationLevel;
}

/**
 * Runs work in one database transaction on the messaging DataSource and carries it through the async call
 * (AsyncLocalStorage): nested calls join the outer transaction, and the application's repositories of that
 * DataSource take part without being passed a manager (see `joinDefaultManager`). It watches the
 * transactions it opens (`TransactionWatcher`): one the database ended under the code's feet (a database
 * error caught and not rethrown) is never taken for committed: a `TransactionAbortedError` instead.
 */
@Injectable()
export class TransactionHost implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(TransactionHost.name);
  private readonly storage = new AsyncLocalStorage<TransactionScope>();
  private readonly watcher = new TransactionWatcher();

  /** @internal Created by Nest; inject it. */
  constructor(@Inject(MESSAGING_DATA_SOURCE) private readonly dataSource: DataSource) {}

  /**
   * @internal Makes the application's repositories of this DataSource join the current transaction, and
   * watches the statements of the transactions begun here.
   */
  onModuleInit(): void {
    joinDefaultManager(this.dataSource, this.storage);
    this.watcher.attach(this.dataSource);
  }

  /** @internal Stops watching the DataSource's statements. */
  onModuleDestroy(): void {
    this.watcher.detach(this.dataSource);
  }

  /** True inside `run()`. */
  get isActive(): boolean {
    return this.storage.getStore() !== undefined;
  }

  /** The transaction's EntityManager inside `run()`, the DataSource's default manager outside. */
  get manager(): EntityManager {
    return this.storage.getStore()?.manager ?? this.dataSource.manager;
  }

  /**
   * Runs `work` in a transaction: joins the current one if there is one (propagation REQUIRED), otherwise
   * begins one, commits when `work` resolves and rolls back when it throws. Throws a
   * `TransactionAbortedError` when the database ended the transaction although `work` resolved (it caught a
   * database error and went on): nothing of it was written.
   */
  async run<T>(work: () => Promise<T>, options: RunInTransactionOptions = {}): Promise<T> {
    if (this.storage.getStore()) return work();
    const transaction = await this.begin(options);
    try {
      const result = await transaction.within(work);
      await transaction.commit();
      return result;
    } catch (error) {
      await transaction.rollback();
      throw error;
    }
  }

  /**
   * @internal Begins a transaction that outlives one call: several pieces of work run `within` it (one at a
   * time), then it commits or rolls back. The consumer's batches use it.
   */
  async begin(options: RunInTransactionOptions = {}): Promise<OpenTransaction> {
    const queryRunner = this.dataSource.createQueryRunner();
    const scope: TransactionScope = { queryRunner, manager: queryRunner.manager, afterCommit: [] };
    try {
      await queryRunner.connect();
      await queryRunner.startTransaction(options.isolation);
    } catch (error) {
      await queryRunner.release().catch(() => undefined);
      throw error;
    }
    return new OpenTransaction(scope, {
      join: (joined, work) => this.enter(joined, work),
      runAfterCommit: (callbacks) => this.runAfterCommit(callbacks),
      watch: this.watcher.watch(queryRunner, String(this.dataSource.options.type)),
      unwatch: () => this.watcher.unwatch(queryRunner),
    });
  }

  /** Registers a callback to run once the current transaction has committed. */
  afterCommit(callback: () => void): void {
    const scope = this.storage.getStore();
    if (!scope) throw new NoActiveTransactionError('TransactionHost.afterCommit()');
    scope.afterCommit.push(callback);
  }

  /** @internal The current transaction, for library code that must write in it. */
  currentScope(): TransactionScope | undefined {
    return this.storage.getStore();
  }

  /**
   * @internal Runs `work` with `scope` as the current transaction. A tenant's host (`MessagingTenants`) also makes its
   * tenant the current one, so that what the work writes goes to that tenant and no other.
   */
  protected enter<T>(scope: TransactionScope, work: () => Promise<T>): Promise<T> {
    return this.storage.run(scope, work);
  }

  /** Runs after-commit callbacks in order; one that throws is logged and the others still run. */
  private runAfterCommit(callbacks: ReadonlyArray<() => void>): void {
    for (const callback of callbacks) {
      try {
        callback();
      } catch (error) {
        this.logger.error(`An after-commit callback failed: ${(error as Error).message}`);
      }
    }
  }
}

/** What an `OpenTransaction` gets from its host. */
interface OpenTransactionHost {
  /** Runs work with `scope` as the current transaction (AsyncLocalStorage). */
  readonly join: <T>(scope: TransactionScope, work: () => Promise<T>) => Promise<T>;
  readonly runAfterCommit: (callbacks: ReadonlyArray<() => void>) => void;
  /** What the database did to the transaction; undefined on a database the library cannot judge. */
  readonly watch: TransactionWatch | undefined;
  readonly unwatch: () => void;
}

/**
 * The library's own: a transaction begun by `TransactionHost.begin()`: work joins it through `within`; `commit` runs
 * the after-commit callbacks, `rollback` drops them; either ends it and releases the connection. A
 * transaction the database ended (a swallowed error) fails `within` and `commit` with a
 * `TransactionAbortedError`.
 */
export class OpenTransaction {
  private ended = false;
  /** The after-commit lists, the transaction's own first, then each one given to `within`, in order. */
  private readonly callbackLists: Array<Array<() => void>>;

  /** @internal Made by `TransactionHost.begin()`. */
  constructor(
    readonly scope: TransactionScope,
    private readonly host: OpenTransactionHost,
  ) {
    this.callbackLists = [scope.afterCommit];
  }

  /**
   * Runs `work` in the transaction (repositories of the DataSource join it). Its after-commit callbacks go
   * to `afterCommit` when given (the caller keeps them apart, e.g. per message of a batch), else to the
   * transaction's own list; all run after the commit. Throws a `TransactionAbortedError` when the database
   * ended the transaction during `work` although `work` resolved, or when `work` failed because of that.
   */
  async within<T>(work: () => Promise<T>, afterCommit?: Array<() => void>): Promise<T> {
    const scope = afterCommit ? { ...this.scope, afterCommit } : this.scope;
    if (afterCommit && !this.callbackLists.includes(afterCommit)) this.callbackLists.push(afterCommit);
    const { watch } = this.host;
    let result: T;
    try {
      result = await this.host.join(scope, work);
    } catch (error) {
      throw watch ? watch.explain(error) : error;
    }
    const aborted = watch?.aborted();
    if (aborted) throw aborted;
    return result;
  }

  /**
   * Commits, then runs the after-commit callbacks. Throwing, the transaction is over (rolled back, or its
   * outcome unknown when the answer to COMMIT was lost) and no callback ran.
   */
  async commit(): Promise<void> {
    const { queryRunner } = this.scope;
    const { watch } = this.host;
    const aborted = watch?.aborted();
    if (aborted) {
      await this.rollback();
      throw aborted;
    }
    try {
      await queryRunner.commitTransaction();
    } catch (error) {
      await this.rollback();
      throw error;
    }
    await this.end();
    // PostgreSQL answered COMMIT with ROLLBACK: an error the watch did not see (a statement past TypeORM).
    if (watch?.commitRolledBack) throw new TransactionAbortedError(undefined);
    this.host.runAfterCommit(this.callbackLists.flat());
  }

  /**
   * Rolls back (never throws: a broken connection has rolled back already). Resolves `'connection-lost'` when
   * the rollback itself failed: the transaction's connection is broken (the database went away, or ended the
   * session), so what failed in it may have failed for that reason; else `'rolled-back'`.
   */
  async rollback(): Promise<'rolled-back' | 'connection-lost'> {
    const { queryRunner } = this.scope;
    let outcome: 'rolled-back' | 'connection-lost' = 'rolled-back';
    if (queryRunner.isTransactionActive) {
      await queryRunner.rollbackTransaction().catch(() => {
        outcome = 'connection-lost';
      });
    }
    await this.end();
    return outcome;
  }

  private async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    this.host.unwatch();
    await this.scope.queryRunner.release().catch(() => undefined);
  }
}
