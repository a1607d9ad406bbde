/** A message in the shape both transports put on, and take off, the wire. */
export interface WireMessage {
  /** Kafka topic or RabbitMQ exchange. */
  readonly destination: string;
  /** Kafka record key; RabbitMQ carries it in the `msg.key` header. Null when the producer set none. */
  readonly key: string | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}
