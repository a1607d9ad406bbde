import { ModuleMetadata, Provider, Type } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  MessagingMigrations,
  MessagingModule,
  MessagingModuleOptions,
  TransportOptions,
} from 'nest-reliable-messaging';
import { OutboxRelay, RelayRoundResult } from 'nest-reliable-messaging/testing';
import { infraEnv } from '../../harness/infra';

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
  /** Called after compiling, before the application starts (to observe its first relay round, say). */
  beforeInit?: (moduleRef: TestingModule) => void;
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
        ...options.messaging,
        transport: options.transport,
      }),
      ...(options.imports ?? []),
    ],
    providers: options.providers ?? [],
  }).compile();
  options.beforeInit?.(moduleRef);
  await moduleRef.init();
  return moduleRef;
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
