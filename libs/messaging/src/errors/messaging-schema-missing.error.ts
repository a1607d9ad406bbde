/** The library's tables are not in the database: the migration has not run. */
export class MessagingSchemaMissingError extends Error {
  constructor(
    readonly table: string,
    readonly migration: string,
    /** The exported list that holds the migration (`MessagingMigrations`, `MysqlMessagingMigrations`). */
    readonly migrations = 'MessagingMigrations',
  ) {
    super(
      `Table ${table} does not exist. Run the migration ${migration}: add ${migrations} (from ` +
        `@app/messaging) to your DataSource's migrations and run them (typeorm migration:run, or migrationsRun: true).`,
    );
    this.name = 'MessagingSchemaMissingError';
  }
}
