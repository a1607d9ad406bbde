import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A row of the outbox table, for applications that want to query it (the library itself reads and writes
 * it with SQL). Create the table with the shipped migration (`MessagingMigrations`).
 */
@Entity({ name: 'messaging_outbox' })
@Index('messaging_outbox_pending_idx', ['id'], { where: 'sent_at IS NULL' })
@Index('messaging_outbox_pending_key_idx', ['destination', 'key', 'id'], { where: 'sent_at IS NULL' })
@Index('messaging_outbox_sent_idx', ['sentAt'], { where: 'sent_at IS NOT NULL' })
export class OutboxMessageEntity {
  /** Insertion order; the relay publishes a key's rows in this order. */
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: string;

  /** The message id (UUIDv7 by default), unique. */
  @Index('messaging_outbox_message_id_key', { unique: true })
  @Column({ name: 'message_id', type: 'uuid' })
  messageId!: string;

  /** The Kafka topic or RabbitMQ exchange. */
  @Column({ type: 'varchar', length: 200 })
  destination!: string;

  /** The event type. */
  @Column({ type: 'varchar', length: 200 })
  type!: string;

  /** The ordering key. */
  @Column({ type: 'text' })
  key!: string;

  /** Application headers and the trace context of the writing transaction. */
  @Column({ type: 'jsonb', default: () => "'{}'::jsonb" })
  headers!: Record<string, string>;

  /** The event's payload, as validated by its schema. */
  @Column({ type: 'jsonb' })
  payload!: unknown;

  /** When the event was recorded (the writing transaction's time). */
  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt!: Date;

  /** When the row was inserted. */
  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  /** Not published before this time (backoff after a failed publish). */
  @Column({ name: 'available_at', type: 'timestamptz', default: () => 'now()' })
  availableAt!: Date;

  /** Failed publish attempts. */
  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  /** The last publish failure (outcome and error name; never payload data). */
  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError!: string | null;

  /** The relay instance holding the row, until `lockedUntil`. */
  @Column({ name: 'locked_by', type: 'text', nullable: true })
  lockedBy!: string | null;

  /** End of the current claim's lease: after it, another relay may take the row over. */
  @Column({ name: 'locked_until', type: 'timestamptz', nullable: true })
  lockedUntil!: Date | null;

  /**
   * Set once the broker confirmed the message; with `relay.mode: 'external'`, at the insert (Debezium
   * publishes the row from the log).
   */
  @Column({ name: 'sent_at', type: 'timestamptz', nullable: true })
  sentAt!: Date | null;
}
