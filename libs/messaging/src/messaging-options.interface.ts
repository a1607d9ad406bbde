import { ClassificationRule } from './retry/error-classifier';
import { RetryPolicyOptions } from './retry/retry-policy.interface';
import type { RabbitQueueType } from './topology/messaging-topology';

/** A SASL login to Kafka: the service's own principal, never an admin's. */
export interface KafkaSaslOptions {
  /** `scram-sha-256`, `scram-sha-512`, or `plain` (refused without `ssl`: it sends the password as is). */
  mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512';
  /** The service's principal. */
  username: string;
  /** Its password, from the environment or a secret store. */
  password: string;
}

/**
 * The client that publishes to Kafka: `kafkajs` (the default) or `platformatic` (`@platformatic/kafka`, an
 * optional peer to install; see the README, Kafka clients).
 */
export type KafkaProducerClient = 'kafkajs' | 'platformatic';

/** Kafka through kafkajs (and, for publishing only, `@platformatic/kafka` if chosen). */
export interface KafkaTransportOptions {
  /** Selects Kafka. */
  kind: 'kafka';
  /** Bootstrap brokers, e.g. `['127.0.0.1:9092']`. Required. */
  brokers: string[];
  /** SASL login. Default: none (a PLAINTEXT listener). */
  sasl?: KafkaSaslOptions;
  /** Connect with TLS. Default false; required with SASL `plain`. */
  ssl?: boolean;
  /** Client id. Default: `serviceName`. */
  clientId?: string;
  /**
   * The client that publishes (the relay, dead-letter and retry copies): `kafkajs`, or `platformatic`, the
   * maintained `@platformatic/kafka` (1.35+, which needs Node.js 20.19.4+; install it beside kafkajs) with the
   * same guarantees (idempotent, acks=all, the same partition for a key) at about half the CPU per message.
   * Consumers, topics and health checks use kafkajs either way. Default `kafkajs`.
   */
  producerClient?: KafkaProducerClient;
  /** Topics the library creates when missing (destinations of handled events, retry and DLQ topics). */
  topics?: {
    /** Default 3. */
    numPartitions?: number;
    /** Default 1 (our single-node broker); use 3 in production. */
    replicationFactor?: number;
  };
  /** Connection timeout, ms. Default 3000. */
  connectionTimeoutMs?: number;
  /**
   * A consumer that stops heartbeating for this long leaves its group and its partitions move on, ms.
   * Default 30000. Lower recovers faster from a crashed process; too low evicts busy ones (min 6000).
   */
  sessionTimeoutMs?: number;
}

/** RabbitMQ through amqplib. */
export interface RabbitMqTransportOptions {
  /** Selects RabbitMQ. */
  kind: 'rabbitmq';
  /** AMQP URL, e.g. `amqp://user:pass@127.0.0.1:5672/vhost`. Required. */
  url: string;
  /**
   * Consumer prefetch per channel. Default 256: the consumer settles a batch after its one commit, so the
   * broker needs room to send the next batch meanwhile.
   */
  prefetch?: number;
  /** Heartbeat, s. Default 10. */
  heartbeatSeconds?: number;
  /**
   * Type of the work, retry and dead-letter queues: `classic`, or `quorum`, replicated on a majority of a
   * cluster's nodes: use `quorum` in production (RabbitMQ 3.10+). A queue cannot change type in place; a
   * service finding one of the other type stops with `MessagingTopologyMismatchError`. Default `classic`.
   */
  queueType?: RabbitQueueType;
  /** The queue type by destination, over `queueType`, e.g. `{ 'audit-log': 'classic' }`. Default: none. */
  queueTypes?: Record<string, RabbitQueueType>;
  /**
   * Destinations that keep a journal for replay, with its retention, e.g. `{ orders: { maxAge: '7D' } }`:
   * a stream queue `<destination>:journal` bound to the destination's exchange, declared (`declare` mode) or
   * checked (`verify`) with the destination's other objects wherever the service prepares the destination.
   * Every message published to the destination is stored once more, for the retention.
   * Default: none (docs/guide/08-redrive.md, Replay a window).
   */
  journals?: Record<string, { maxAge?: string; maxLengthBytes?: number }>;
}

/** The broker: Kafka or RabbitMQ. */
export type TransportOptions = KafkaTransportOptions | RabbitMqTransportOptions;

/**
 * How the relay finds messages to publish: `poll` reads the outbox table (any database); `logical` (PostgreSQL
 * only) tails the database's log through a logical replication slot, and `OutboxService.add()` writes each
 * message into the log (`pg_logical_emit_message`) instead of an outbox row; `external`: another program
 * publishes the outbox's rows from the database's log (Debezium's outbox event router), and `add()` writes each
 * row marked sent. See the guide's chapters 13 (logical relay) and 14 (Debezium).
 */
export type RelayMode = 'poll' | 'logical' | 'external';

/** The outbox relay. */
export interface RelayOptions {
  /** Run the relay in this process. Default true. */
  enabled?: boolean;
  /**
   * `poll` (the outbox table) or `logical` (PostgreSQL's log, through a replication slot: one PostgreSQL
   * transaction per message, the writer's; needs `wal_level = logical`, a role with the REPLICATION attribute
   * and the slot, made with `nest-messaging relay slot create`). On MySQL and MariaDB `logical` is a startup
   * error. `external`: Debezium (or another reader of the log) publishes the rows; `add()` inserts them marked
   * sent, the polling relay only publishes rows left pending from before the switch, and retention deletes rows
   * `retention.sentRetentionMs` after their insert (docs/guide/14-debezium.md). Default `poll`.
   */
  mode?: RelayMode;
  /**
   * With `mode: 'logical'`: the replication slot the relay reads (and the publication of the same name);
   * writers tag their messages with it, so that services sharing a database never read each other's. Default:
   * derived from the DataSource's schema, `messaging_outbox` or `messaging_outbox_<schema>`.
   */
  slot?: string;
  /**
   * Messages per publish request. Default 200. Under a backlog a claim takes two batches at once (one
   * statement) and publishes them one after the other.
   */
  batchSize?: number;
  /** Safety poll: also look for work this often, ms. Default 10000. */
  pollIntervalMs?: number;
  /** How long a claim is held before another instance may take the rows over, ms. Default 30000. */
  leaseMs?: number;
  /**
   * Also wake relays in other processes with PostgreSQL LISTEN/NOTIFY. Default false (see README). PostgreSQL
   * only: on MySQL and MariaDB `true` is a startup error.
   */
  notify?: boolean;
  /** Backoff when publishing fails (broker down): first delay, ms. Default 200. */
  retryInitialDelayMs?: number;
  /** Backoff ceiling, ms. Default 2000. */
  retryMaxDelayMs?: number;
}

/** Deleting sent outbox rows. */
export interface OutboxRetentionOptions {
  /**
   * Keep sent rows this long, ms. Default 86400000 (one day). With 0 the relay deletes each row as soon as
   * the broker confirmed it instead of marking it sent: about a quarter less database work per message
   * (PostgreSQL), but the outbox then holds pending rows only, so nothing in it says what was sent when, and
   * a message id given to `OutboxService.add()` is checked against pending rows only. With relay mode
   * `external` a row counts as sent from its insert: it is kept this long after it (0: until the next purge).
   */
  sentRetentionMs?: number;
  /** Look for expired rows this often, ms. Default 60000. */
  intervalMs?: number;
  /** Rows deleted per statement. Default 1000. */
  batchSize?: number;
}

/** Consumers and the inbox. */
export interface ConsumerOptions {
  /** Start consumers at application bootstrap. Default true; false when you start them through `MessagingServer`. */
  autoStart?: boolean;
  /** Keep inbox records this long, ms. Default 604800000 (seven days): a redelivery older than that runs again. */
  inboxRetentionMs?: number;
  /**
   * Handlers running at once per consumer group (different keys; one key's messages run one at a time), per
   * tenant with tenants on (docs/guide/17-tenants.md). Default 4.
   */
  concurrency?: number;
  /**
   * Messages of one lane (the messages that queued up for one handler slot) handled in one database
   * transaction at most: their inbox records and their handlers' writes commit together. When a handler
   * throws, the transaction rolls back and the messages before it in the batch are handled again, so their
   * handlers run a second time (their writes commit once). Default 50; at most 500. With 1, each message has
   * a transaction of its own and a handler runs again only after its own failure: for handlers with side
   * effects outside the database that must not repeat (and cannot be made idempotent or moved after the
   * commit).
   */
  batchSize?: number;
  /**
   * What a consumer group does with a message of a type it has no handler for (a topic that carries several
   * event types of one key, a type a newer producer started to send): `settle` acks it unhandled, counts it
   * in `messaging_consumer_unhandled_total` per type and logs the type once; `dead-letter` parks it as
   * VALIDATION/UNKNOWN_TYPE (the behaviour before). Default `settle`.
   */
  unhandledTypes?: UnhandledTypeAction;
  /** `unhandledTypes` per consumer group, over the default, e.g. `{ billing: 'dead-letter' }`. Default: none. */
  unhandledTypesByGroup?: Record<string, UnhandledTypeAction>;
  /**
   * How long a message this consumer cannot read yet is held before it is dead-lettered: an event version
   * newer than its definition's, one older than its upcasters reach, or one an upcaster failed on (see the
   * guide's chapter on types and versions).
   */
  versionHold?: VersionHoldOptions;
}

/** What a consumer group does with a message of a type it has no handler for. */
export type UnhandledTypeAction = 'settle' | 'dead-letter';

/**
 * Holding messages a consumer cannot read yet (a rolling deploy: a newer producer, an older consumer). Kafka
 * pauses the partition and reads the message again after each wait; RabbitMQ keeps the delivery unacked and
 * looks again. Waits back off from `initialDelayMs`, ×2, up to `maxDelayMs`, with full jitter.
 */
export interface VersionHoldOptions {
  /**
   * Hold a message this long, in all, then dead-letter it, ms; 0 dead-letters at once. Default 1500000
   * (25 minutes: under RabbitMQ's default `consumer_timeout` of 30 minutes, past which the broker closes the
   * channel of a delivery held unacked).
   */
  windowMs?: number;
  /** The first wait, ms. Default 1000. */
  initialDelayMs?: number;
  /** The longest wait between two looks, ms. Default 60000. */
  maxDelayMs?: number;
  /**
   * Also hold a message whose payload the schema refuses at the consumer's own version (a producer that
   * changed the payload without raising the version), instead of dead-lettering it at once: on Kafka each
   * such message stops its partition for the whole window. Default false.
   */
  holdSchemaMismatches?: boolean;
}

/** What a dead-letter copy keeps (the DLQ is kept longer and read by more people: docs/guide/05-retries-and-dead-letters.md, Dead letters). */
export interface DeadLetterOptions {
  /**
   * The deployment's key secret, base64 of at least 32 random bytes (`openssl rand -base64 32`), from the
   * environment or a secret store. A dead-letter copy's key becomes its HMAC pseudonym under this secret, and
   * the real key travels sealed with it, so that a redrive holding the same secret (`MESSAGING_KEY_SECRET`)
   * puts the message back on its own key's partition. Required when the application has consumers.
   */
  keySecret?: string;
  /** Header names a dead-letter copy keeps besides the library's own (an allowlist). Default: none. */
  carryHeaders?: string[];
}

/**
 * Who declares the broker topology: `verify` (default, production-safe) only checks at startup that every
 * destination, work queue, retry destination and dead-letter destination exists, and stops with an error
 * naming what is missing (declare them with `nest-messaging topology apply`, as an admin); `declare` creates
 * them, which needs broker rights that also let a service delete or re-declare its own dead-letter
 * destination: for local development and tests only.
 */
export type TopologyMode = 'declare' | 'verify';

/**
 * Tenants: an outbox and an inbox in each tenant's own database (or schema), registered with
 * `MessagingTenants.add()`, drained by one relay and bound to their tenant on the wire
 * (docs/guide/17-tenants.md). Polling relay only.
 */
export interface TenantOptions {
  /**
   * The secret that signs each message's tenant (HMAC-SHA256 of tenant, message id and body), base64 of at
   * least 32 random bytes (`openssl rand -base64 32`), shared by the services that publish and consume tenant
   * messages. A consumer applies a message in the tenant's database only when the signature holds. Required.
   */
  signingSecret: string;
  /** Tenants' outbox claims at once; the others wait their turn, first come, first served. Default 4. */
  concurrentClaims?: number;
  /**
   * Tenants named in the `tenant` label of the tenant metrics, in the order they were added; the others are
   * counted under `_other` (a bounded label set). Default 50.
   */
  maxLabelledTenants?: number;
  /**
   * How long (ms) a tenant's database may not answer a consumer before that tenant's deliveries are parked: kept
   * in the service's own database (`messaging_parked`), settled on the broker, and applied in their order once
   * the tenant's database answers again, so that they cannot fill the consumer's prefetch (RabbitMQ) or a
   * partition's window (Kafka) and stop the other tenants. Default 5000; at least 100.
   */
  parkAfterMs?: number;
}

/** What `MessagingModule.forRoot()` takes. */
export interface MessagingModuleOptions {
  /** Names this service: the broker client id, relay instance ids, logs. Required. */
  serviceName: string;
  /** Which broker, and how to reach it. Required. */
  transport: TransportOptions;
  /** The outbox relay (publishing). */
  relay?: RelayOptions;
  /** Deleting sent outbox rows. */
  retention?: OutboxRetentionOptions;
  /** Consumers and the inbox. */
  consumers?: ConsumerOptions;
  /** Retry policies per destination, for handlers without their own `@RetryPolicy()`. Default: none. */
  retryDefaults?: Record<string, RetryPolicyOptions>;
  /** Extra error classification rules, checked before the built-in ones. */
  classification?: ClassificationRule[];
  /** What dead-letter copies keep. `keySecret` is required when the application has consumers. */
  deadLetter?: DeadLetterOptions;
  /** Who declares the broker topology. Default `verify`: run `nest-messaging topology apply` first. */
  topology?: TopologyMode;
  /** An outbox and inbox per tenant database (`MessagingTenants`). Default: off (one DataSource). */
  tenants?: TenantOptions;
}

/** Module extras: fixed when the module is defined, also with `forRootAsync`. */
export interface MessagingModuleExtras {
  /** Register the module globally. Default true. */
  isGlobal?: boolean;
  /** The TypeORM connection name to use. Default: the default connection. */
  dataSource?: string;
}
