import { DynamicModule, Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { TestDatabase } from '../../harness/test-database';
import { closeFailedApp } from './close-failed-app';
import { testConnectionOptions } from './messaging-app';

@Module({})
class ExternalDataSourceModule {}

/**
 * A TypeORM DataSource the test owns (in the suite's schema or database), so that an application that fails
 * to start leaves no connection pool behind: the test destroys it itself.
 */
export async function openDataSource(schema: string | TestDatabase, migrate = true): Promise<DataSource> {
  const dataSource = new DataSource({ ...testConnectionOptions(schema, 4, migrate), logging: false });
  await dataSource.initialize();
  if (migrate) await dataSource.runMigrations();
  return dataSource;
}

/**
 * Compiles and starts an application of `messaging` (a `MessagingModule.forRoot…()`) over `dataSource`.
 * Closes what was started when startup fails, and rethrows the startup error.
 */
export async function startMessagingModule(
  dataSource: DataSource,
  messaging: DynamicModule,
): Promise<TestingModule> {
  const dataSourceModule: DynamicModule = {
    module: ExternalDataSourceModule,
    global: true,
    providers: [{ provide: getDataSourceToken(), useValue: dataSource }],
    exports: [getDataSourceToken()],
  };
  const moduleRef = await Test.createTestingModule({ imports: [dataSourceModule, messaging] }).compile();
  try {
    await moduleRef.init();
  } catch (error) {
    await closeFailedApp(moduleRef);
    throw error;
  }
  return moduleRef;
}
