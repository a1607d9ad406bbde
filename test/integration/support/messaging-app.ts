import { ModuleMetadata, Provider, Type } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  MessagingMigrations,
  MessagingModule,
  MessagingModuleOptions,
  TransportOptions,
} from '@app/messaging';
import { LOCAL_KEY_SECRET } from '../../../tools/infra/local-secrets';
import { infraEnv } from '../../harness/infra';
import { closeFailedApp } from './close-failed-app';

/** A Nest application context with TypeORM in the suite's schema and the messaging module. */
export interface MessagingAppOptions {
  schema: string;
  transport: TransportOptions;
  entities?: Type[];
  providers?: Provider[];
  imports?: ModuleMetadata['imports'];
  messaging?: Partial<Omit<MessagingModuleOptions, 'transport'>>;
  /** Run the shipped migration (default true). */
  migrate?: boolean;
}

export async function createMessagingApp(options: MessagingAppOptions): Promise<TestingModule> {
  const entities = options.entities ?? [];
  const moduleRef = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({
        type: 'postgres',
        url: infraEnv().databaseUrl,
        schema: options.schema,
        entities,
        migrations: options.migrate === false ? [] : MessagingMigrations,
        migrationsRun: options.migrate !== false,
        synchronize: entities.length > 0,
        logging: false,
        extra: { max: 10 },
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
  }).compile();
  try {
    await moduleRef.init();
  } catch (error) {
    await closeFailedApp(moduleRef); // an app that failed to start leaves nothing running
    throw error;
  }
  return moduleRef;
}

export function kafkaTransport(brokers: string[] = infraEnv().kafkaBrokers): TransportOptions {
  return { kind: 'kafka', brokers };
}

export function rabbitTransport(url: string = infraEnv().amqpUrl): TransportOptions {
  return { kind: 'rabbitmq', url };
}
