import { DataSource } from 'typeorm';
import { UnsupportedDatabaseError } from '../errors/unsupported-database.error';
import { ParkedStore } from '../inbox/parked-store';
import { InboxStore } from '../inbox/inbox-store';
import { OutboxStore, OutboxStoreSettings } from '../outbox/outbox-store';
import { MysqlInboxStore } from './mysql/mysql-inbox-store';
import { MysqlOutboxStore } from './mysql/mysql-outbox-store';
import { MysqlParkedStore } from './mysql/mysql-parked-store';
import { PostgresInboxStore } from './postgres/postgres-inbox-store';
import { PostgresOutboxStore } from './postgres/postgres-outbox-store';
import { PostgresParkedStore } from './postgres/postgres-parked-store';

/** The SQL of one database family: everything the library does differently per database is behind these. */
export interface MessagingDialect {
  readonly outboxStore: (dataSource: DataSource, settings?: OutboxStoreSettings) => OutboxStore;
  readonly inboxStore: (dataSource: DataSource) => InboxStore;
  readonly parkedStore: (dataSource: DataSource) => ParkedStore;
}

const POSTGRES: MessagingDialect = {
  outboxStore: (dataSource, settings) => new PostgresOutboxStore(dataSource, settings),
  inboxStore: (dataSource) => new PostgresInboxStore(dataSource),
  parkedStore: (dataSource) => new PostgresParkedStore(dataSource),
};

const MYSQL: MessagingDialect = {
  outboxStore: (dataSource, settings) => new MysqlOutboxStore(dataSource, settings),
  inboxStore: (dataSource) => new MysqlInboxStore(dataSource),
  parkedStore: (dataSource) => new MysqlParkedStore(dataSource),
};

/** TypeORM's `type` → dialect. `mariadb` and `mysql` share TypeORM's driver and our SQL. */
const DIALECTS: Readonly<Record<string, MessagingDialect>> = {
  postgres: POSTGRES,
  mysql: MYSQL,
  mariadb: MYSQL,
};

/** The dialect of the DataSource's database; `UnsupportedDatabaseError` naming its type for any other. */
export function messagingDialect(dataSource: DataSource): MessagingDialect {
  const type = String(dataSource.options.type);
  const dialect = Object.hasOwn(DIALECTS, type) ? DIALECTS[type] : undefined;
  if (!dialect) throw new UnsupportedDatabaseError(type);
  return dialect;
}
