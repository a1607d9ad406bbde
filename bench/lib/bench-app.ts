import { DynamicModule, INestApplicationContext, Module, Provider, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  ConsumerOptions,
  MessagingMigrations,
  MessagingModule,
  RelayOptions,
  TransportOptions,
} from '@app/messaging';
import { infraEnv } from '../../tools/infra/env';
import { LOCAL_KEY_SECRET } from '../../tools/infra/local-secrets';
import { BenchLogger } from './bench-logger';
import { TransportKind } from './plan';

@Module({})
class BenchAppModule {}

/** One Nest application of the bench: TypeORM in `schema` of `databaseUrl`, and the messaging module. */
export interface BenchAppOptions {
  databaseUrl: string;
  schema: string;
  transport: TransportKind;
  serviceName?: string;
  relay?: RelayOptions;
  consumers?: ConsumerOptions;
  entities?: Type[];
  providers?: Provider[];
  /** Connections in TypeORM's pool. Default 10 (TypeORM's). */
  poolSize?: number;
}

export async function createBenchApp(options: BenchAppOptions): Promise<INestApplicationContext> {
  const entities = options.entities ?? [];
  const module: DynamicModule = {
    module: BenchAppModule,
    imports: [
      TypeOrmModule.forRoot({
        type: 'postgres',
        url: options.databaseUrl,
        schema: options.schema,
        entities,
        migrations: MessagingMigrations,
        migrationsRun: true,
        synchronize: entities.length > 0,
        logging: false,
        extra: { max: options.poolSize ?? 10 },
      }),
      TypeOrmModule.forFeature(entities),
      MessagingModule.forRoot({
        serviceName: options.serviceName ?? 'bench',
        transport: transportOptions(options.transport),
        relay: options.relay,
        consumers: options.consumers,
        topology: 'declare',
        deadLetter: { keySecret: LOCAL_KEY_SECRET },
      }),
    ],
    providers: options.providers ?? [],
  };
  return NestFactory.createApplicationContext(module, { logger: new BenchLogger() });
}

export function transportOptions(kind: TransportKind): TransportOptions {
  const env = infraEnv();
  return kind === 'kafka' ? { kind, brokers: env.kafkaBrokers } : { kind, url: env.amqpUrl };
}
