import { DataSource } from 'typeorm';

/** Quoted, schema-qualified names of the library's tables: they live in the DataSource's schema. */
export interface MessagingTables {
  readonly outbox: string;
  readonly inbox: string;
  /** Failed attempts of messages retried in place, beside the inbox. */
  readonly attempts: string;
  /** The schema, or undefined for the search_path. */
  readonly schema?: string;
}

export function messagingTables(dataSource: DataSource): MessagingTables {
  const schema = (dataSource.options as { schema?: string }).schema;
  const prefix = schema ? `${quoteIdent(schema)}.` : '';
  return {
    outbox: `${prefix}messaging_outbox`,
    inbox: `${prefix}messaging_inbox`,
    attempts: `${prefix}messaging_attempts`,
    schema,
  };
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
