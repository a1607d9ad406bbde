import { MigrationInterface } from 'typeorm';
import { ChainRedriveAudit1764979200000 } from './chain-redrive-audit.migration';
import { CreateConsolePlans1765065600000 } from './create-console-plans.migration';
import { CreateMessagingAttempts1764720000000 } from './create-attempts-table.migration';
import { CreateMessagingTables1764547200000 } from './create-messaging-tables.migration';
import { CreateMysqlMessagingAttempts1764892800000 } from './create-mysql-attempts-table.migration';
import { CreateMysqlMessagingTables1764806400000 } from './create-mysql-messaging-tables.migration';
import { CreateRedriveLedger1764892800000 } from './create-redrive-ledger.migration';
import { OutboxFillfactor1764633600000 } from './outbox-fillfactor.migration';

/**
 * The library's migrations for PostgreSQL, in order: add them to your DataSource's `migrations`. The last
 * three create the redrive ledger (audit log and its hash chain, used approvals) and the console's plans,
 * used in the admin database only.
 */
export const MessagingMigrations: Array<new () => MigrationInterface> = [
  CreateMessagingTables1764547200000,
  OutboxFillfactor1764633600000,
  CreateMessagingAttempts1764720000000,
  CreateRedriveLedger1764892800000,
  ChainRedriveAudit1764979200000,
  CreateConsolePlans1765065600000,
];

/**
 * The library's migrations for MySQL and MariaDB, in order: add them to your DataSource's `migrations`. (The
 * redrive ledger's admin database is PostgreSQL.)
 */
export const MysqlMessagingMigrations: Array<new () => MigrationInterface> = [
  CreateMysqlMessagingTables1764806400000,
  CreateMysqlMessagingAttempts1764892800000,
];
