import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Notification } from './notification.entity';
import { NewNotification, Notifier } from './notifier';

/** Up to this many notifications of one call get a log line each; more get one line together. */
const LOGGED_ONE_BY_ONE = 10;

/** The default notifier: stores each notification (the subscriber reads them over HTTP) and logs it. */
@Injectable()
export class StoringNotifier extends Notifier {
  private readonly logger = new Logger('Notifier');

  constructor(@InjectRepository(Notification) private readonly notifications: Repository<Notification>) {
    super();
  }

  async notify(notifications: readonly NewNotification[]): Promise<number> {
    if (notifications.length === 0) return 0;
    const notifiedAt = new Date();
    // The repository joins the consumer's transaction; ON CONFLICT DO NOTHING is the second guard.
    const result = await this.notifications
      .createQueryBuilder()
      .insert()
      .values(notifications.map((n) => ({ ...n, notifiedAt })))
      .orIgnore()
      .returning('subscriber_id, post_id')
      .execute();
    const stored = result.raw as Array<{ subscriber_id: number; post_id: number }>;
    if (stored.length > LOGGED_ONE_BY_ONE) {
      this.logger.log(`${stored.length} subscribers: new post ${stored[0].post_id}.`);
    } else {
      for (const row of stored) this.logger.log(`Subscriber ${row.subscriber_id}: new post ${row.post_id}.`);
    }
    return stored.length;
  }
}
