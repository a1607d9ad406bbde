import { CreateMessagingTables1764547200000 } from './create-messaging-tables.migration';
import { CreateMysqlMessagingTables1764806400000 } from './create-mysql-messaging-tables.migration';
import { OutboxFillfactor1764633600000 } from './outbox-fillfactor.migration';

export {
  CreateMessagingTables1764547200000,
  CreateMysqlMessagingTables1764806400000,
  OutboxFillfactor1764633600000,
};

/** The library's migrations for PostgreSQL, in order: add them to your DataSource's `migrations`. */
export const MessagingMigrations = [CreateMessagingTables1764547200000, OutboxFillfactor1764633600000];

/** The library's migrations for MySQL and MariaDB, in order: add them to your DataSource's `migrations`. */
export const MysqlMessagingMigrations = [CreateMysqlMessagingTables1764806400000];
