import { Type } from '@nestjs/common';
import { TypeOrmModuleOptions } from '@nestjs/typeorm';
import { MessagingMigrations, MysqlMessagingMigrations } from 'nest-reliable-messaging';
import { ServiceEnvironment } from '../config/service-environment';
import { PERMANENT_DATABASE_ERRORS } from '../startup/explain-startup-failure';

/** A service's own migrations, per database family (the SQL differs). */
export interface ServiceMigrations {
  readonly postgres: ReadonlyArray<new () => unknown>;
  /** MySQL and MariaDB. */
  readonly mysql: ReadonlyArray<new () => unknown>;
}

/**
 * TypeORM for a demo service: its database (and schema, on PostgreSQL) from the environment, its entities,
 * and its tables plus the library's outbox and inbox created by migrations (never synchronize). A database
 * that is not answering yet is retried; a missing database or schema is not (it does not appear by waiting).
 * On MySQL and MariaDB the driver reads and writes times as UTC, as the migrations' defaults store them.
 */
export function serviceTypeOrmOptions(
  database: ServiceEnvironment['database'],
  entities: Type[],
  migrations: ServiceMigrations,
): TypeOrmModuleOptions {
  const common = {
    entities,
    migrationsRun: true,
    synchronize: false,
    retryAttempts: 5,
    retryDelay: 2_000,
    toRetry: (error: unknown) => !PERMANENT_DATABASE_ERRORS.includes((error as { code?: string }).code ?? ''),
  };
  if (database.type === 'postgres') {
    return {
      ...common,
      type: 'postgres',
      url: database.url,
      schema: database.schema,
      migrations: [...MessagingMigrations, ...migrations.postgres],
    };
  }
  return {
    ...common,
    type: database.type,
    url: database.url,
    timezone: 'Z',
    migrations: [...MysqlMessagingMigrations, ...migrations.mysql],
  };
}
