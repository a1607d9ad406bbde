/**
 * The admin identity a redrive runs as. The application runtime never holds it: with RabbitMQ it is a user
 * allowed to read dead-letter queues (the services' users are not); with Kafka, the admin principal the
 * broker's ACLs let read `*.dlq` topics. Its secret also signs approvals.
 */
export interface AdminCredential {
  /** The admin user or principal name. */
  readonly principal: string;
  /** Its password or token. Never logged, never written to a plan or an approval. */
  readonly secret: string;
}

/** Where the RabbitMQ broker is. The URL's user and password, if any, are replaced by the admin credential. */
export interface RabbitMqRedriveBroker {
  readonly kind: 'rabbitmq';
  /** AMQP URL with the virtual host, e.g. `amqp://127.0.0.1:5672/orders`. */
  readonly url: string;
}

/** Where the Kafka cluster is and how the admin principal logs in. */
export interface KafkaRedriveBroker {
  readonly kind: 'kafka';
  /** Bootstrap brokers, e.g. `['127.0.0.1:9092']`. */
  readonly brokers: readonly string[];
  /**
   * SASL mechanism the credential logs in with. Default: none (a PLAINTEXT broker without ACLs, as in local
   * development: then only the presence of the credential is checked, and it signs approvals).
   */
  readonly sasl?: 'plain' | 'scram-sha-256' | 'scram-sha-512';
  /** Use TLS. Default false. */
  readonly ssl?: boolean;
}

/** The broker a `RedriveService` works on. */
export type RedriveBroker = RabbitMqRedriveBroker | KafkaRedriveBroker;
