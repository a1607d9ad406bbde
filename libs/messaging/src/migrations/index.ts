import { MigrationInterface } from 'typeorm';
import { ChainRedriveAudit1764979200000 } from './chain-redrive-audit.migration';
import { CreateConsolePlans1765065600000 } from './create-console-plans.migration';
import { CreateMessagingAttempts1764720000000 } from './create-attempts-table.migration';
import { CreateMessagingTables1764547200000 } from './create-messaging-tables.migration';
import { CreateMysqlMessagingAttempts1764892800000 } from './create-mysql-attempts-table.migration';
import { CreateMysqlMessagingTables1764806400000 } from './create-mysql-messaging-tables.migration';
import { CreateRedriveLedger1764892800000 } from './create-redrive-ledger.migration';
import { CreateRedriveBulkPlans1765497600000 } from './create-redrive-bulk-plans.migration';
import { CreateMysqlParkedDeliveries1765670400000 } from './create-mysql-parked-deliveries.migration';
import { CreateMysqlScheduledMessages1765152000000 } from './create-mysql-scheduled-messages.migration';
import { CreateParkedDeliveries1765670400000 } from './create-parked-deliveries.migration';
import { CreateScheduledMessages1765152000000 } from './create-scheduled-messages.migration';
import { OutboxFillfactor1764633600000 } from './outbox-fillfactor.migration';
import { PinRedriveKeyring1765238400000 } from './pin-redrive-keyring.migration';
import { PinRedriveTopology1765324800000 } from './pin-redrive-topology.migration';

/**
 * The library's migrations for a service's PostgreSQL database, in order: add them to your DataSource's
 * `migrations`. They create the outbox, the inbox, the attempts table, the table of scheduled messages and
 * the one of parked deliveries (tenants on), nothing else. (Before issue 37 this list also held the admin
 * database's migrations, `MessagingAdminMigrations`: a database that ran them keeps those tables, unused; the
 * changelog says how to drop them.)
 */
export const MessagingMigrations: Array<new () => MigrationInterface> = [
  CreateMessagingTables1764547200000,
  OutboxFillfactor1764633600000,
  CreateMessagingAttempts1764720000000,
  CreateScheduledMessages1765152000000,
  CreateParkedDeliveries1765670400000,
];

/**
 * The library's migrations for the admin database (PostgreSQL), in order: the redrive ledger (audit log and
 * its hash chain, used approvals) and the console's plans. `nest-messaging db migrate` runs them on
 * MESSAGING_ADMIN_DATABASE_URL; or add them to the `migrations` of a DataSource on that database. A service's
 * database does not need them.
 */
export const MessagingAdminMigrations: Array<new () => MigrationInterface> = [
  CreateRedriveLedger1764892800000,
  ChainRedriveAudit1764979200000,
  CreateConsolePlans1765065600000,
  PinRedriveKeyring1765238400000,
  PinRedriveTopology1765324800000,
  CreateRedriveBulkPlans1765497600000,
];

/**
 * The library's migrations for MySQL and MariaDB, in order: add them to your DataSource's `migrations`. (The
 * redrive ledger's admin database is PostgreSQL.)
 */
export const MysqlMessagingMigrations: Array<new () => MigrationInterface> = [
  CreateMysqlMessagingTables1764806400000,
  CreateMysqlMessagingAttempts1764892800000,
  CreateMysqlScheduledMessages1765152000000,
  CreateMysqlParkedDeliveries1765670400000,
];
