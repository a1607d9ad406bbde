import { EntityManager } from 'typeorm';

/** What a handler learns about the message it handles, besides the payload. */
export interface MessageContext {
  /** The message id (a UUIDv7 unless the producer chose one): the inbox's key, the same on every delivery. */
  readonly messageId: string;
  /** The event type (`msg.type`), e.g. `PostCreated`. */
  readonly type: string;
  /** The destination the message was published to (also when it came back from a retry destination). */
  readonly destination: string;
  /** The ordering key the event definition derived from the payload (e.g. the author id). */
  readonly key: string;
  /** The consumer group handling it. */
  readonly group: string;
  /** 1 on the first delivery; counts every delivery to this group, retries included. */
  readonly attempt: number;
  /**
   * The event version the producer wrote (`msg.event-version`; 1 when absent). The payload the handler gets is
   * always of its definition's version: an older one came through the definition's upcasters.
   */
  readonly eventVersion: number;
  /** When the event was recorded: the publishing transaction's time. */
  readonly occurredAt: Date;
  /** Application headers and trace context; never the reserved `msg.*` ones. */
  readonly headers: Readonly<Record<string, string>>;
  /** Kafka: where the record sits. */
  readonly partition?: number;
  /** Kafka: the record's offset in its partition. */
  readonly offset?: string;
  /** RabbitMQ: the delivery tag, and whether the broker delivered it before. */
  readonly deliveryTag?: number;
  /** RabbitMQ: the broker delivered this message before (to this or another consumer). */
  readonly redelivered?: boolean;
  /**
   * With tenants on: the tenant the message was published from (its signature checked). The handler runs in
   * that tenant's database: `manager` is its transaction, and `OutboxService.add()` writes to its outbox.
   */
  readonly tenant?: string;
  /** The transaction the handler runs in: write with it (or with your injected repositories). */
  readonly manager: EntityManager;
}
