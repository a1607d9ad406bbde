import { Column, Entity, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';

/**
 * A subscriber was told about a post (the blog post's "alarm"). One per subscriber and post: the inbox
 * makes a redelivered event a no-op, and the unique constraint is the second guard.
 */
@Entity({ name: 'notifications' })
@Unique('notifications_subscriber_post_key', ['subscriberId', 'postId'])
export class Notification {
  @PrimaryGeneratedColumn()
  id!: number;

  @Index('notifications_subscriber_id_idx')
  @Column({ name: 'subscriber_id', type: 'integer' })
  subscriberId!: number;

  @Column({ name: 'post_id', type: 'integer' })
  postId!: number;

  @Column({ name: 'author_id', type: 'integer' })
  authorId!: number;

  @Column({ type: 'varchar', length: 200 })
  title!: string;

  /** The `PostCreated` event (and message) id. */
  @Column({ name: 'event_id', type: 'uuid' })
  eventId!: string;

  /** When the post was written: the event's occurrence, recorded in post-service's transaction. */
  @Column({ name: 'occurred_at' })
  occurredAt!: Date;

  /** When the subscriber was notified. `notifiedAt - occurredAt` is the commit-to-notification latency. */
  @Column({ name: 'notified_at' })
  notifiedAt!: Date;
}
