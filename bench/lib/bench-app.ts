import { DynamicModule, INestApplicationContext, Module, Provider, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSourceOptions } from 'typeorm';
import {
  ConsumerOptions,
  KafkaProducerClient,
  MessagingMigrations,
  MessagingModule,
  OutboxRetentionOptions,
  RelayOptions,
  TransportOptions,
} from 'nest-reliable-messaging';
import { infraEnv } from '../../tools/infra/env';
import { LOCAL_KEY_SECRET } from '../../tools/infra/local-secrets';
import { BenchLogger } from './bench-logger';
import { TransportKind } from './plan';

@Module({})
class BenchAppModule {}

/**
 * One Nest application of the bench: TypeORM in `schema` of the PostgreSQL database `databaseUrl` (or on
 * `connection`, with its migrations), and the messaging module.
 */
export interface BenchAppOptions {
  databaseUrl?: string;
  schema?: string;
  /** Instead of `databaseUrl` and `schema`: a connection of `BenchOutbox`, on either database. */
  connection?: DataSourceOptions;
  transport: TransportKind;
  /** Kafka only: the client the relay publishes with. Default the library's (kafkajs). */
  producerClient?: KafkaProducerClient;
  serviceName?: string;
  relay?: RelayOptions;
  retention?: OutboxRetentionOptions;
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
        ...connection(options),
        entities,
        migrationsRun: true,
        synchronize: entities.length > 0,
        logging: false,
      }),
      TypeOrmModule.forFeature(entities),
      MessagingModule.forRoot({
        serviceName: options.serviceName ?? 'bench',
        transport: transportOptions(options.transport, options.producerClient),
        relay: options.relay,
        retention: options.retention,
        consumers: options.consumers,
        topology: 'declare',
        deadLetter: { keySecret: LOCAL_KEY_SECRET },
      }),
    ],
    providers: options.providers ?? [],
  };
  return NestFactory.createApplicationContext(module, { logger: new BenchLogger() });
}

function connection(options: BenchAppOptions): DataSourceOptions {
  const poolSize = options.poolSize ?? 10;
  if (options.connection?.type === 'postgres') return { ...options.connection, extra: { max: poolSize } };
  if (options.connection) return { ...options.connection, poolSize } as DataSourceOptions;
  return {
    type: 'postgres',
    url: options.databaseUrl,
    schema: options.schema,
    migrations: MessagingMigrations,
    extra: { max: poolSize },
  };
}

export function transportOptions(
  kind: TransportKind,
  producerClient?: KafkaProducerClient,
): TransportOptions {
  const env = infraEnv();
  if (kind === 'rabbitmq') return { kind, url: env.amqpUrl };
  return { kind, brokers: env.kafkaBrokers, ...(producerClient ? { producerClient } : {}) };
}
