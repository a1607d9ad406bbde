import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SubscriptionsModule } from '../subscriptions/subscriptions.module';
import { Notification } from './notification.entity';
import { NotificationsController } from './notifications.controller';
import { NotificationsService } from './notifications.service';
import { Notifier } from './notifier';
import { PostCreatedHandler } from './post-created.handler';
import { StoringNotifier } from './storing-notifier';

@Module({
  imports: [TypeOrmModule.forFeature([Notification]), SubscriptionsModule],
  controllers: [NotificationsController],
  providers: [NotificationsService, PostCreatedHandler, { provide: Notifier, useClass: StoringNotifier }],
})
export class NotificationsModule {}
