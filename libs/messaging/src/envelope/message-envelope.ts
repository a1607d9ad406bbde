/**
 * The envelope format's version. Version 1 is "binary mode": the body is the JSON payload alone; the
 * envelope's fields travel in headers (`MessageHeaders`), the key as the Kafka record key (RabbitMQ:
 * the `msg.key` header). A consumer refuses a message of a version it does not know (DESERIALIZATION).
 */
export const ENVELOPE_VERSION = '1';

/** A message as the library sees it on both ends. */
export interface MessageEnvelope<TPayload = unknown> {
  /** UUIDv7: unique, and ordered by creation time. */
  readonly messageId: string;
  /** The event type, e.g. `PostCreated`. */
  readonly type: string;
  /** The Kafka topic or RabbitMQ exchange. */
  readonly destination: string;
  /** The ordering key: messages with one key are published, and consumed, in order. */
  readonly key: string;
  /** When the business fact happened. */
  readonly occurredAt: Date;
  /**
   * The version of the payload (`msg.event-version`). Decoding sets it (1 when the header is absent); when
   * encoding, undefined writes no header (version 1).
   */
  readonly eventVersion?: number;
  /** Application headers plus trace context (`traceparent`); never the reserved `msg.*` names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The event's JSON payload. */
  readonly payload: TPayload;
}
