import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MessagingModule } from 'nest-reliable-messaging';
import { OperationsModule, serviceTypeOrmOptions } from '@app/service-kit';
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
        TypeOrmModule.forRoot(
          serviceTypeOrmOptions(config.database, [Subscription, Notification], SubscribeServiceMigrations),
        ),
        // Consumers start at bootstrap; a broker that is down then is retried in the background.
        MessagingModule.forRoot({
          serviceName: config.serviceName,
          transport: config.transport,
          topology: config.topology,
          deadLetter: { keySecret: config.keySecret },
        }),
        SubscriptionsModule,
        NotificationsModule,
        OperationsModule,
      ],
    };
  }
}
