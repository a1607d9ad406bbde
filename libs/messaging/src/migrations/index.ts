import { CreateMessagingTables1764547200000 } from './create-messaging-tables.migration';
import { CreateRedriveLedger1764806400000 } from './create-redrive-ledger.migration';
import { OutboxFillfactor1764633600000 } from './outbox-fillfactor.migration';

export {
  CreateMessagingTables1764547200000,
  CreateRedriveLedger1764806400000,
  OutboxFillfactor1764633600000,
};

/** The library's migrations, in order: add them to your DataSource's `migrations`. */
export const MessagingMigrations = [
  CreateMessagingTables1764547200000,
  OutboxFillfactor1764633600000,
  CreateRedriveLedger1764806400000,
];
