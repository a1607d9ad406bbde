import { CreateMessagingTables1764547200000 } from './create-messaging-tables.migration';
import { CreateMysqlMessagingTables1764806400000 } from './create-mysql-messaging-tables.migration';
import { CreateRedriveLedger1764892800000 } from './create-redrive-ledger.migration';
import { OutboxFillfactor1764633600000 } from './outbox-fillfactor.migration';

export {
  CreateMessagingTables1764547200000,
  CreateMysqlMessagingTables1764806400000,
  CreateRedriveLedger1764892800000,
  OutboxFillfactor1764633600000,
};

/**
 * The library's migrations for PostgreSQL, in order: add them to your DataSource's `migrations`. The last
 * creates the redrive ledger (audit log, used approvals), used in the admin database only.
 */
export const MessagingMigrations = [
  CreateMessagingTables1764547200000,
  OutboxFillfactor1764633600000,
  CreateRedriveLedger1764892800000,
];

/**
 * The library's migrations for MySQL and MariaDB, in order: add them to your DataSource's `migrations`. (The
 * redrive ledger's admin database is PostgreSQL.)
 */
export const MysqlMessagingMigrations = [CreateMysqlMessagingTables1764806400000];
