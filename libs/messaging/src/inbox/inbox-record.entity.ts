import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One message a consumer group has handled. Its primary key makes a second delivery of the same message
 * to the same group a no-op, also when two deliveries race.
 */
@Entity({ name: 'messaging_inbox' })
@Index('messaging_inbox_handled_idx', ['handledAt'])
export class InboxRecordEntity {
  /** The consumer group that handled the message. */
  @PrimaryColumn({ name: 'consumer_group', type: 'varchar', length: 200 })
  consumerGroup!: string;

  /** The handled message's id. */
  @PrimaryColumn({ name: 'message_id', type: 'uuid' })
  messageId!: string;

  /** The message's event type. */
  @Column({ type: 'varchar', length: 200 })
  type!: string;

  /** SHA-256 of the payload: a redelivery with another payload is logged as a mismatch. */
  @Column({ name: 'payload_hash', type: 'char', length: 64 })
  payloadHash!: string;

  /** When the handler's transaction committed; records older than the inbox retention are purged. */
  @Column({ name: 'handled_at', type: 'timestamptz', default: () => 'now()' })
  handledAt!: Date;
}
