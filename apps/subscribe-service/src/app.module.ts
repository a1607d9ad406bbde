import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MessagingMigrations, MessagingModule } from '@app/messaging';
import { OperationsModule, PERMANENT_DATABASE_ERRORS } from '@app/service-kit';
import { SubscribeServiceConfig } from './config/app.config';
import { SubscribeServiceMigrations } from './migrations';
import { Notification } from './notifications/notification.entity';
import { NotificationsModule } from './notifications/notifications.module';
import { Subscription } from './subscriptions/subscription.entity';
import { SubscriptionsModule } from './subscriptions/subscriptions.module';

@Module({})
export class AppModule {
  /** The application, wired from its validated configuration (see `config/app.config.ts`). */
  static forRoot(config: SubscribeServiceConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: config.database.url,
          schema: config.database.schema,
          entities: [Subscription, Notification],
          // The app's tables and the library's outbox and inbox, created by migrations (never synchronize).
          migrations: [...MessagingMigrations, ...SubscribeServiceMigrations],
          migrationsRun: true,
          synchronize: false,
          retryAttempts: 5,
          retryDelay: 2_000,
          // A missing database or schema does not appear by waiting.
          toRetry: (error: unknown) =>
            !PERMANENT_DATABASE_ERRORS.includes((error as { code?: string }).code ?? ''),
        }),
        // Consumers start at bootstrap; a broker that is down then is retried in the background.
        MessagingModule.forRoot({ serviceName: config.serviceName, transport: config.transport }),
        SubscriptionsModule,
        NotificationsModule,
        OperationsModule,
      ],
    };
  }
}
