import { MessagingError } from './messaging.error';

/** The library's tables are not in the database: the migration has not run. */
export class MessagingSchemaMissingError extends MessagingError {
  constructor(
    /** The table that is missing, schema-qualified. */
    readonly table: string,
    /** The migration that creates it. */
    readonly migration: string,
    /** The exported list that holds the migration (`MessagingMigrations`, `MysqlMessagingMigrations`). */
    readonly migrations = 'MessagingMigrations',
  ) {
    super(
      `Table ${table} does not exist. Run the migration ${migration}: add ${migrations} (from ` +
        `nest-reliable-messaging) to your DataSource's migrations and run them (typeorm migration:run, or migrationsRun: true).`,
    );
    this.name = 'MessagingSchemaMissingError';
  }
}
