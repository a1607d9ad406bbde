import { DataSource } from 'typeorm';
import { MessagingTables } from './messaging-tables';

/**
 * The tables in the connection's database (the DataSource's `database`, or the one its URL names): names
 * are left unqualified, as the migration creates them.
 */
export function mysqlTables(dataSource: DataSource): MessagingTables {
  const database = (dataSource.driver as { database?: string }).database;
  return {
    outbox: 'messaging_outbox',
    inbox: 'messaging_inbox',
    attempts: 'messaging_attempts',
    scheduled: 'messaging_outbox_scheduled',
    parked: 'messaging_parked',
    schema: database || undefined,
  };
}
