import { MessagingError } from '../../errors/messaging.error';

/**
 * The admin database lacks the redrive ledger (the audit log and the used-approval table): run the
 * library's migrations there (`nest-messaging db migrate`, or a service's migrations on that database).
 */
export class RedriveLedgerMissingError extends MessagingError {
  constructor(
    /** The missing table, e.g. `messaging_redrive_audit` (schema-qualified when a schema is set). */
    readonly table: string,
    /** The name of the library migration that creates it. */
    readonly migration: string,
  ) {
    super(
      `The admin database has no table ${table}. Run the library's migrations on it (migration ${migration}): ` +
        '`nest-messaging db migrate` with MESSAGING_ADMIN_DATABASE_URL (they are `MessagingAdminMigrations`; a ' +
        "service's `MessagingMigrations` do not create it).",
    );
    this.name = 'RedriveLedgerMissingError';
  }
}
