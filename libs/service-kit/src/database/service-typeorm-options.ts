import { Type } from '@nestjs/common';
import { TypeOrmModuleOptions } from '@nestjs/typeorm';
import { MessagingMigrations } from 'nest-reliable-messaging';
import { ServiceEnvironment } from '../config/service-environment';
import { PERMANENT_DATABASE_ERRORS } from '../startup/explain-startup-failure';

/**
 * TypeORM for a demo service: its database and schema from the environment, its entities, and its tables
 * plus the library's outbox and inbox created by migrations (never synchronize). A database that is not
 * answering yet is retried; a missing database or schema is not (it does not appear by waiting).
 */
export function serviceTypeOrmOptions(
  database: ServiceEnvironment['database'],
  entities: Type[],
  migrations: Array<new () => unknown>,
): TypeOrmModuleOptions {
  return {
    type: 'postgres',
    url: database.url,
    schema: database.schema,
    entities,
    migrations: [...MessagingMigrations, ...migrations],
    migrationsRun: true,
    synchronize: false,
    retryAttempts: 5,
    retryDelay: 2_000,
    toRetry: (error: unknown) => !PERMANENT_DATABASE_ERRORS.includes((error as { code?: string }).code ?? ''),
  };
}
