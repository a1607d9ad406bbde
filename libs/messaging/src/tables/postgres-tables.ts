import { DataSource } from 'typeorm';
import { MessagingTables } from './messaging-tables';

/** The tables in the DataSource's schema (`"schema".messaging_outbox`), or on the search_path without one. */
export function postgresTables(dataSource: DataSource): MessagingTables {
  const schema = (dataSource.options as { schema?: string }).schema;
  const prefix = schema ? `${quoteIdent(schema)}.` : '';
  return {
    outbox: `${prefix}messaging_outbox`,
    inbox: `${prefix}messaging_inbox`,
    attempts: `${prefix}messaging_attempts`,
    scheduled: `${prefix}messaging_outbox_scheduled`,
    parked: `${prefix}messaging_parked`,
    schema,
  };
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
