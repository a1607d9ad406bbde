import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Notification } from './notification.entity';

@Injectable()
export class NotificationsService {
  constructor(@InjectRepository(Notification) private readonly notifications: Repository<Notification>) {}

  /** A subscriber's notifications, oldest first. */
  forSubscriber(subscriberId: number): Promise<Notification[]> {
    return this.notifications.find({ where: { subscriberId }, order: { id: 'ASC' } });
  }
}
