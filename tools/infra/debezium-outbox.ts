import * as path from 'node:path';
import { readProperties } from './java-properties';
import { ConnectorProperties } from './kafka-connect';

/** Where the Debezium connector reads the library's outbox (`relay.mode: 'external'`). */
export interface DebeziumOutboxSettings {
  /** The connector's name. Default `messaging-outbox`. */
  readonly name?: string;
  /** The database that holds the outbox, reached as an ordinary client: `wal_level = logical`. */
  readonly database: {
    readonly host: string;
    readonly port: number;
    readonly user: string;
    readonly password?: string;
    readonly dbname: string;
  };
  /** The outbox table's schema (the DataSource's `schema`). Default `public`. */
  readonly schema?: string;
  /** The replication slot Debezium creates and reads. Default `debezium_outbox`. */
  readonly slot?: string;
  /** The publication (made beforehand: `createOutboxPublication`). Default: the slot's name. */
  readonly publication?: string;
  /** More connector settings, over these (e.g. `poll.interval.ms`). */
  readonly extra?: Readonly<Record<string, string>>;
}

/** The connector configuration docs/guide/14-debezium.md shows, which the test and the bench run. */
export const OUTBOX_CONNECTOR_PROPERTIES = path.resolve(
  __dirname,
  '..',
  '..',
  'examples',
  'debezium',
  'messaging-outbox.properties',
);

/**
 * The connector of examples/debezium/messaging-outbox.properties (Debezium's PostgreSQL connector reading the
 * library's outbox table, its outbox event router and the library's `OutboxHeaders` transformation putting
 * every message on Kafka as the library's relay does), with `settings`' database, schema, slot and name.
 */
export function debeziumOutboxConnector(settings: DebeziumOutboxSettings): ConnectorProperties {
  const slot = settings.slot ?? 'debezium_outbox';
  const { database } = settings;
  return {
    ...readProperties(OUTBOX_CONNECTOR_PROPERTIES),
    name: settings.name ?? 'messaging-outbox',
    'database.hostname': database.host,
    'database.port': String(database.port),
    'database.user': database.user,
    'database.password': database.password ?? '',
    'database.dbname': database.dbname,
    'topic.prefix': slot,
    'slot.name': slot,
    'publication.name': settings.publication ?? slot,
    'table.include.list': `${settings.schema ?? 'public'}.messaging_outbox`,
    ...settings.extra,
  };
}

/** Runs one SQL statement (a `pg` client's or a cluster's query). */
export type OutboxSql = (text: string) => Promise<unknown>;

/**
 * `CREATE PUBLICATION <name> FOR TABLE <schema>.messaging_outbox WITH (publish = 'insert')`: the rows Debezium
 * reads, and only their inserts (the connector creates none: `publication.autocreate.mode = disabled`).
 */
export async function createOutboxPublication(
  sql: OutboxSql,
  schema = 'public',
  name = 'debezium_outbox',
): Promise<void> {
  await sql(
    `create publication ${quoteIdent(name)} for table ${quoteIdent(schema)}.messaging_outbox with (publish = 'insert')`,
  );
}

/** Drops the slot (once nobody reads it) and the publication, if they exist. */
export async function dropOutboxSlot(sql: OutboxSql, name = 'debezium_outbox'): Promise<void> {
  await sql(
    `select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = '${name.replace(/'/g, "''")}'`,
  );
  await sql(`drop publication if exists ${quoteIdent(name)}`);
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
