import { MessagingError } from './messaging.error';

/**
 * The database ended a transaction while the code inside it went on as if nothing happened: a database
 * error was caught inside the transaction and not rethrown. PostgreSQL aborts the whole transaction at the
 * first failed statement (its COMMIT then answers ROLLBACK, without an error); MySQL and MariaDB roll the
 * whole transaction back on a deadlock (and on a lock wait timeout with `innodb_rollback_on_timeout`), after
 * which statements would autocommit one by one. Nothing of the transaction was written: no business row,
 * no outbox message, no inbox record.
 *
 * Thrown by an `@Outbox()` method (and `TransactionHost.run()`) instead of returning as if committed; a
 * consumer's handler that does it fails its delivery with this error (classified by `databaseError`), and
 * the other messages of its batch are handled again.
 */
export class TransactionAbortedError extends MessagingError {
  /**
   * The first error the database raised in the transaction, the one that ended it; `undefined` when the
   * library did not see it (a statement that bypassed TypeORM's query runner).
   */
  readonly databaseError: unknown;

  constructor(databaseError: unknown) {
    super(
      `A database error was caught inside a transaction and not rethrown (${describe(databaseError)}): the ` +
        'database rolled the whole transaction back, so nothing of it was written. Do not swallow database ' +
        'errors inside a transaction: rethrow them, run the statement that may fail in a savepoint (a nested ' +
        '`manager.transaction()`), or avoid the error (INSERT … ON CONFLICT DO NOTHING, INSERT IGNORE). ' +
        'A deadlock rolls back the whole transaction on MySQL and MariaDB: run the whole unit of work again.',
      { cause: databaseError },
    );
    this.name = 'TransactionAbortedError';
    this.databaseError = databaseError;
  }
}

/** The database error's class, code and first line, for the message; the log line keeps it short. */
function describe(error: unknown): string {
  if (error === undefined) return 'an error the library did not see; COMMIT answered ROLLBACK';
  if (!(error instanceof Error)) return 'a non-Error value';
  const driver = (error as { driverError?: { code?: unknown } }).driverError;
  const code = (error as { code?: unknown }).code ?? driver?.code;
  const first = error.message.split('\n')[0].slice(0, 120);
  return `${error.name}${typeof code === 'string' || typeof code === 'number' ? `/${code}` : ''}: ${first}`;
}
