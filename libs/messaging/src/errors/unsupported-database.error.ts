import { MessagingError } from './messaging.error';

/** The application's DataSource is a database the library cannot keep its outbox and inbox in. Raised at startup. */
export class UnsupportedDatabaseError extends MessagingError {
  constructor(
    /** The DataSource's `type` (`sqlite`, `mysql`, …). */
    readonly databaseType: string,
    /** Why, when the type itself is supported but the server is not (its version). */
    readonly reason?: string,
  ) {
    super(
      reason
        ? `MessagingModule cannot use this ${databaseType} server: ${reason}.`
        : `MessagingModule cannot keep its outbox and inbox in a '${databaseType}' DataSource. Supported: ` +
            "PostgreSQL (type 'postgres') and MySQL 8.0.4+ or MariaDB 10.6+ (type 'mysql' or 'mariadb'). " +
            'Give MessagingModule a DataSource of one of these (the `dataSource` option names it).',
    );
    this.name = 'UnsupportedDatabaseError';
  }
}
