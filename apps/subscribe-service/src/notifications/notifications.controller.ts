import { Controller, Get, Param } from '@nestjs/common';
import { ParseIdPipe } from '@app/service-kit';
import { Notification } from './notification.entity';
import { NotificationsService } from './notifications.service';

@Controller('subscribers')
export class NotificationsController {
  constructor(private readonly notifications: NotificationsService) {}

  /** Everything the subscriber was notified of, oldest first (an unknown subscriber has none). */
  @Get(':id/notifications')
  list(@Param('id', ParseIdPipe) subscriberId: number): Promise<Notification[]> {
    return this.notifications.forSubscriber(subscriberId);
  }
}
