import { EntityManager } from 'typeorm';

/** What a handler learns about the message it handles, besides the payload. */
export interface MessageContext {
  readonly messageId: string;
  readonly type: string;
  /** The destination the message was published to (also when it came back from a retry destination). */
  readonly destination: string;
  readonly key: string;
  /** The consumer group handling it. */
  readonly group: string;
  /** 1 on the first delivery; counts every delivery to this group, retries included. */
  readonly attempt: number;
  readonly occurredAt: Date;
  /** Application headers and trace context; never the reserved `msg.*` ones. */
  readonly headers: Readonly<Record<string, string>>;
  /** Kafka: where the record sits. */
  readonly partition?: number;
  readonly offset?: string;
  /** RabbitMQ: the delivery tag, and whether the broker delivered it before. */
  readonly deliveryTag?: number;
  readonly redelivered?: boolean;
  /** The transaction the handler runs in: write with it (or with your injected repositories). */
  readonly manager: EntityManager;
}
