import { ModuleMetadata, Provider, Type } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSourceOptions } from 'typeorm';
import {
  Clock,
  getMessagingClockToken,
  MessagingMigrations,
  MessagingModule,
  MessagingModuleOptions,
  MysqlMessagingMigrations,
  TransportOptions,
} from 'nest-reliable-messaging';
import { OutboxRelay, RelayRoundResult } from 'nest-reliable-messaging/testing';
import { LOCAL_KEY_SECRET } from '../../../tools/infra/local-secrets';
import { infraEnv } from '../../harness/infra';
import { TestDatabase } from '../../harness/test-database';
import { closeFailedApp } from './close-failed-app';

/** A Nest application context with TypeORM in the suite's schema (or database) and the messaging module. */
export interface MessagingAppOptions {
  /** A PostgreSQL schema on the shared server, by name, or the suite's schema or database. */
  schema: string | TestDatabase;
  transport: TransportOptions;
  entities?: Type[];
  providers?: Provider[];
  /** HTTP controllers: served only with `listen`. */
  controllers?: Type[];
  imports?: ModuleMetadata['imports'];
  messaging?: Partial<Omit<MessagingModuleOptions, 'transport'>>;
  /** Run the shipped migration (default true). */
  migrate?: boolean;
  /** The library's clock instead of `systemClock` (`overrideProvider(getMessagingClockToken())`), e.g. a `FakeClock`. */
  clock?: Clock;
  /** Called after compiling, before the application starts (to observe its first relay round, say). */
  beforeInit?: (moduleRef: TestingModule) => void;
  /** Starts it as an HTTP application listening on 127.0.0.1:`listen` (started by `listen`, as `main.ts` does). */
  listen?: number;
}

export async function createMessagingApp(options: MessagingAppOptions): Promise<TestingModule> {
  const entities = options.entities ?? [];
  const builder = Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({
        ...testConnectionOptions(options.schema, 10, options.migrate !== false),
        entities,
        migrationsRun: options.migrate !== false,
        synchronize: entities.length > 0,
        logging: false,
      }),
      TypeOrmModule.forFeature(entities),
      MessagingModule.forRoot({
        serviceName: 'test-service',
        // The suites test the library, not topology administration: the app declares what it needs.
        topology: 'declare',
        deadLetter: { keySecret: LOCAL_KEY_SECRET },
        ...options.messaging,
        transport: options.transport,
      }),
      ...(options.imports ?? []),
    ],
    providers: options.providers ?? [],
    controllers: options.controllers ?? [],
  });
  if (options.clock) builder.overrideProvider(getMessagingClockToken()).useValue(options.clock);
  const moduleRef = await builder.compile();
  options.beforeInit?.(moduleRef);
  try {
    if (options.listen === undefined) await moduleRef.init();
    else await moduleRef.createNestApplication({ logger: false }).listen(options.listen, '127.0.0.1');
  } catch (error) {
    await closeFailedApp(moduleRef); // an app that failed to start leaves nothing running
    throw error;
  }
  return moduleRef;
}

/**
 * TypeORM's connection to a test schema or database, with a pool of `poolSize` and, with `migrate`, the
 * library's migrations for its dialect.
 */
export function testConnectionOptions(
  schema: string | TestDatabase,
  poolSize: number,
  migrate: boolean,
): DataSourceOptions {
  const connection =
    typeof schema === 'string'
      ? ({ type: 'postgres', url: infraEnv().databaseUrl, schema } as const)
      : schema.connection;
  if (connection.type === 'postgres') {
    return { ...connection, migrations: migrate ? MessagingMigrations : [], extra: { max: poolSize } };
  }
  return { ...connection, migrations: migrate ? MysqlMessagingMigrations : [], poolSize };
}

export function kafkaTransport(brokers: string[] = infraEnv().kafkaBrokers): TransportOptions {
  return { kind: 'kafka', brokers };
}

export function rabbitTransport(url: string = infraEnv().amqpUrl): TransportOptions {
  return { kind: 'rabbitmq', url };
}

/** Resolves after the relay's next round (the bootstrap round, when listened to from `beforeInit`). */
export function nextRelayRound(moduleRef: TestingModule): Promise<RelayRoundResult> {
  return new Promise((resolve) => {
    const stop = moduleRef.get(OutboxRelay).onRound((round) => {
      stop();
      resolve(round);
    });
  });
}
