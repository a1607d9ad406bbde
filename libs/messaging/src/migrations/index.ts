import { CreateMessagingAttempts1764720000000 } from './create-attempts-table.migration';
import { CreateMessagingTables1764547200000 } from './create-messaging-tables.migration';
import { OutboxFillfactor1764633600000 } from './outbox-fillfactor.migration';

export {
  CreateMessagingAttempts1764720000000,
  CreateMessagingTables1764547200000,
  OutboxFillfactor1764633600000,
};

/** The library's migrations, in order: add them to your DataSource's `migrations`. */
export const MessagingMigrations = [
  CreateMessagingTables1764547200000,
  OutboxFillfactor1764633600000,
  CreateMessagingAttempts1764720000000,
];
