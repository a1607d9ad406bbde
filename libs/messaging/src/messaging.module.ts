import { DynamicModule, Module } from '@nestjs/common';
import { MessagingCoreModule } from './messaging-core.module';
import { MessagingModuleAsyncOptions, MessagingModuleRootOptions } from './messaging.module-definition';

/**
 * Reliable messaging for a Nest application: the transactional outbox and its relay, idempotent consumers,
 * retries and dead-lettering, over Kafka or RabbitMQ, in the application's TypeORM DataSource.
 *
 * ```ts
 * @Module({
 *   imports: [
 *     TypeOrmModule.forRoot({ type: 'postgres', url, migrations: [...MessagingMigrations], migrationsRun: true }),
 *     MessagingModule.forRoot({ serviceName: 'post-service', transport: { kind: 'kafka', brokers: ['127.0.0.1:9092'] } }),
 *   ],
 * })
 * export class AppModule {}
 * ```
 * Options are validated at startup (an `InvalidMessagingOptionsError` names every bad one);
 * `forRootAsync({ useFactory, inject })` takes them from configuration. Import it once, in the root module:
 * it is global unless `isGlobal: false`.
 */
@Module({})
export class MessagingModule {
  /** Registers the library with these options. */
  static forRoot(options: MessagingModuleRootOptions): DynamicModule {
    return MessagingModule.wrap(MessagingCoreModule.forRoot(options));
  }

  /** Registers the library with options built by a factory, class or existing provider (configuration). */
  static forRootAsync(options: MessagingModuleAsyncOptions): DynamicModule {
    return MessagingModule.wrap(MessagingCoreModule.forRootAsync(options));
  }

  private static wrap(core: DynamicModule): DynamicModule {
    return { module: MessagingModule, imports: [core], exports: [core] };
  }
}
