import { TransactionAbortedError } from '../errors/transaction-aborted.error';

/** How a database treats a failed statement inside a transaction. */
export type TransactionFamily = 'postgres' | 'mysql';

/** The statements a transaction the database ended still takes: ROLLBACK, ROLLBACK TO SAVEPOINT. */
const ROLLBACK = /^\s*rollback\b/i;
const COMMIT = /^\s*commit\b/i;

/**
 * What the database did to one open transaction, learnt from the answers to its statements (the
 * `TransactionWatcher` feeds it; no I/O here):
 * - PostgreSQL aborts the transaction at a statement the server refused, until a ROLLBACK TO SAVEPOINT, and
 *   answers COMMIT with the command tag ROLLBACK, without an error;
 * - MySQL and MariaDB end it on some errors only (a deadlock; a lock wait timeout with
 *   `innodb_rollback_on_timeout`), silently: later statements autocommit. After a failed statement the
 *   watcher asks the server (`probed`).
 * Once the transaction is ended, statements other than a rollback are refused here, before they reach the
 * database (on MySQL they would autocommit), with a `TransactionAbortedError` naming the first error.
 */
export class TransactionWatch {
  private endedBy?: { readonly error: unknown };
  private rolledBackAtCommit = false;
  /** True while the watcher asks the server about the transaction: its own statement is not watched. */
  probing = false;

  constructor(readonly family: TransactionFamily) {}

  /** A statement is about to run: throws a `TransactionAbortedError` once the database ended the transaction. */
  beforeStatement(sql: string): void {
    if (this.endedBy && !ROLLBACK.test(sql)) throw new TransactionAbortedError(this.endedBy.error);
  }

  /** A statement succeeded; `raw` is the driver's answer (node-postgres: a result with its command tag). */
  succeeded(sql: string, raw: unknown): void {
    if (COMMIT.test(sql)) {
      this.rolledBackAtCommit = property(raw, 'command') === 'ROLLBACK';
      return;
    }
    // PostgreSQL runs nothing but a rollback in an aborted transaction: a success means it is usable again.
    if (this.family === 'postgres') this.endedBy = undefined;
  }

  /**
   * A statement failed with `error` (TypeORM's `QueryFailedError`). True when the server must be asked
   * whether the transaction is still open (MySQL, MariaDB: then call `probed`).
   */
  failed(error: unknown): boolean {
    if (this.endedBy) return false;
    if (this.family === 'mysql') return true;
    // A refusal by the server aborts the transaction; an error of the client before sending does not.
    if (property(property(error, 'driverError'), 'severity') !== undefined) this.endedBy = { error };
    return false;
  }

  /** The server's answer after the failed statement `error`: whether the transaction is still open. */
  probed(error: unknown, open: boolean): void {
    if (!open) this.endedBy ??= { error };
  }

  /** Why the database ended the transaction, as the error to throw; undefined while it is usable. */
  aborted(): TransactionAbortedError | undefined {
    return this.endedBy && new TransactionAbortedError(this.endedBy.error);
  }

  /** After a COMMIT that did not throw: true when PostgreSQL answered it ROLLBACK. */
  get commitRolledBack(): boolean {
    return this.rolledBackAtCommit;
  }

  /**
   * What to throw for `thrown`, thrown by work in the transaction: a consequence of an error swallowed
   * before (PostgreSQL's 25P02, "current transaction is aborted") becomes a `TransactionAbortedError`
   * naming that first error; anything else, the first error rethrown included, stays as it is.
   */
  explain(thrown: unknown): unknown {
    if (!this.endedBy || thrown instanceof TransactionAbortedError) return thrown;
    const driverError = property(thrown, 'driverError');
    if (driverError !== undefined && driverError === property(this.endedBy.error, 'driverError'))
      return thrown;
    return property(driverError, 'code') === '25P02'
      ? new TransactionAbortedError(this.endedBy.error)
      : thrown;
  }
}

function property(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}
