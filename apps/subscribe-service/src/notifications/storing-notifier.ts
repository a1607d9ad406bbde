import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Notification } from './notification.entity';
import { NewNotification, Notifier } from './notifier';

/** A notification as it is inserted. */
type NotificationRow = NewNotification & { notifiedAt: Date };
/** A notification that was new: stored now, not there already. */
type Stored = Pick<NewNotification, 'subscriberId' | 'postId'>;

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
    const rows = notifications.map((n) => ({ ...n, notifiedAt }));
    const stored = this.notifications.manager.connection.driver.isReturningSqlSupported('insert')
      ? await this.insertReturning(rows)
      : await this.insertEach(rows);
    for (const row of stored) {
      this.logger.log(`Subscriber ${row.subscriberId}: new post ${row.postId}.`);
    }
    return stored.length;
  }

  /**
   * One statement (PostgreSQL, MariaDB). The repository joins the consumer's transaction; a conflict on
   * (subscriber, post) is skipped, the second guard after the inbox.
   */
  private async insertReturning(rows: NotificationRow[]): Promise<Stored[]> {
    const result = await this.notifications
      .createQueryBuilder()
      .insert()
      .values(rows)
      .orIgnore()
      .returning('subscriber_id, post_id')
      .execute();
    const raw = result.raw as Array<{ subscriber_id: number; post_id: number }>;
    return raw.map((r) => ({ subscriberId: r.subscriber_id, postId: r.post_id }));
  }

  /** A statement per row where INSERT has no RETURNING (MySQL): the affected count says what was stored. */
  private async insertEach(rows: NotificationRow[]): Promise<Stored[]> {
    const stored: Stored[] = [];
    for (const row of rows) {
      const result = await this.notifications.createQueryBuilder().insert().values(row).orIgnore().execute();
      if ((result.raw as { affectedRows?: number }).affectedRows === 1) stored.push(row);
    }
    return stored;
  }
}
