import { AsyncLocalStorage } from 'node:async_hooks';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { IsolationLevel } from 'typeorm/driver/types/IsolationLevel';
import { MESSAGING_DATA_SOURCE } from '../messaging.constants';
import { NoActiveTransactionError } from '../errors/no-active-transaction.error';
import { joinDefaultManager } from './join-default-manager';
import { TransactionScope } from './transaction-scope';

/** Options of `TransactionHost.run()`. */
export interface RunInTransactionOptions {
  /** Isolation level of a new transaction. Default: the database's (READ COMMITTED on PostgreSQL). */
  isolation?: IsolationLevel;
}

/**
 * Runs work in one database transaction on the messaging DataSource and carries it through the async call
 * (AsyncLocalStorage): nested calls join the outer transaction, and the application's repositories of that
 * DataSource take part without being passed a manager (see `joinDefaultManager`).
 */
@Injectable()
export class TransactionHost implements OnModuleInit {
  private readonly logger = new Logger(TransactionHost.name);
  private readonly storage = new AsyncLocalStorage<TransactionScope>();

  /** @internal Created by Nest; inject it. */
  constructor(@Inject(MESSAGING_DATA_SOURCE) private readonly dataSource: DataSource) {}

  /** @internal Makes the application's repositories of this DataSource join the current transaction. */
  onModuleInit(): void {
    joinDefaultManager(this.dataSource, this.storage);
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
   * begins one, commits when `work` resolves and rolls back when it throws.
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
   * time), then it commits or rolls back. The consumer's batches use it, with a savepoint per message.
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
    return new OpenTransaction(
      scope,
      (work) => this.storage.run(scope, work),
      (s) => this.runAfterCommit(s),
    );
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

  private runAfterCommit(scope: TransactionScope): void {
    for (const callback of scope.afterCommit) {
      try {
        callback();
      } catch (error) {
        this.logger.error(`An after-commit callback failed: ${(error as Error).message}`);
      }
    }
  }
}

/**
 * @internal A transaction begun by `TransactionHost.begin()`: work joins it through `within`; `commit` runs
 * the after-commit callbacks, `rollback` drops them; either ends it and releases the connection.
 */
export class OpenTransaction {
  private ended = false;

  constructor(
    readonly scope: TransactionScope,
    private readonly join: <T>(work: () => Promise<T>) => Promise<T>,
    private readonly afterCommit: (scope: TransactionScope) => void,
  ) {}

  /** Runs `work` in the transaction (repositories of the DataSource join it). */
  within<T>(work: () => Promise<T>): Promise<T> {
    return this.join(work);
  }

  async commit(): Promise<void> {
    const { queryRunner } = this.scope;
    try {
      await queryRunner.commitTransaction();
    } catch (error) {
      await this.rollback();
      throw error;
    }
    await this.end();
    this.afterCommit(this.scope);
  }

  /** Rolls back (never throws: a broken connection has rolled back already). */
  async rollback(): Promise<void> {
    const { queryRunner } = this.scope;
    if (queryRunner.isTransactionActive) await queryRunner.rollbackTransaction().catch(() => undefined);
    await this.end();
  }

  private async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.scope.queryRunner.release().catch(() => undefined);
  }
}
