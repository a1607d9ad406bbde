/**
 * Reliable messaging for NestJS: a transactional outbox, idempotent consumers (an inbox), declarative retry
 * policies and dead-lettering, over Kafka or RabbitMQ, with TypeORM on PostgreSQL, MySQL or MariaDB.
 *
 * This is the public API: what an application writes code against. Redrive (an admin operation) is in
 * `nest-reliable-messaging/redrive`, the Nest microservice strategy in `nest-reliable-messaging/microservices`.
 *
 * @packageDocumentation
 */
import { InboxRecordEntity } from './inbox/inbox-record.entity';
import { OutboxMessageEntity } from './outbox/outbox-message.entity';

// The module and its options
export { MessagingModule } from './messaging.module';
export {
  getMessagingClockToken,
  getMessagingDataSourceToken,
  getMessagingOptionsToken,
  getMessagingTransportToken,
  InjectMessagingOptions,
  InjectMessagingTransport,
} from './messaging.tokens';
export type { CancelTimer, Clock } from './common/clock';
export type { MessagingModuleAsyncOptions, MessagingModuleRootOptions } from './messaging.module-definition';
export type {
  ConsumerOptions,
  DeadLetterOptions,
  KafkaProducerClient,
  KafkaSaslOptions,
  KafkaTransportOptions,
  MessagingModuleExtras,
  MessagingModuleOptions,
  OutboxRetentionOptions,
  RabbitMqTransportOptions,
  RelayMode,
  RelayOptions,
  TenantOptions,
  TopologyMode,
  TransportOptions,
  UnhandledTypeAction,
  VersionHoldOptions,
} from './messaging-options.interface';

// Events
export { defineEvent } from './envelope/event-definition';
export type {
  EventDefinition,
  EventDefinitionInput,
  EventPayload,
  Upcaster,
} from './envelope/event-definition';
export { newMessageId } from './envelope/message-id';
export { MessageHeaders } from './envelope/message-headers';
export { FailureCategory } from './errors/failure-category';

// Publishing: the outbox
export { Outbox } from './outbox/outbox.decorator';
export type { OutboxOptions } from './outbox/outbox.decorator';
export { OutboxService } from './outbox/outbox.service';
export type { AddMessageOptions } from './outbox/outbox.service';
export { MAX_SCHEDULE_AHEAD_MS } from './outbox/schedule';
export type { CancelRefusal, CancelResult } from './outbox/cancel-result';
export { TransactionHost } from './transaction/transaction-host';
export type { RunInTransactionOptions } from './transaction/transaction-host';

// Tenants: an outbox and inbox per tenant database
export { MessagingTenants } from './tenants/messaging-tenants';
export type { TenantRemoval, TenantStatus } from './tenants/messaging-tenants';
export { TenantRequiredError } from './errors/tenant-required.error';
export { UnknownTenantError } from './errors/unknown-tenant.error';
export { InvalidTenantError } from './errors/invalid-tenant.error';

// Consuming: idempotent handlers and retries
export { IdempotentHandler } from './consumers/idempotent-handler.decorator';
export type { HandlerMethod, IdempotentHandlerOptions } from './consumers/idempotent-handler.decorator';
export type { MessageContext } from './consumers/message-context';
export { RetryPolicy } from './retry/retry-policy.decorator';
export { RetryMode, RetryOrdering } from './retry/retry-policy.interface';
export type { BackoffOptions, RetryPolicyOptions } from './retry/retry-policy.interface';
export type { Classification, ClassificationRule } from './retry/error-classifier';

// Operations
export { MessagingHealthIndicator } from './observability/messaging-health.indicator';
export type { MessagingHealthResult, RelayHealthLimits } from './observability/messaging-health.indicator';
export { MessagingMetrics } from './observability/messaging-metrics';
export { MessagingStatus } from './observability/messaging-status';
export { ConsumersStillJoiningError } from './errors/consumers-still-joining.error';
export type { MessagingStatusSnapshot } from './observability/messaging-status';

// Topology: declared by an admin (`nest-messaging topology apply`), checked by the services
export { parseMessagingTopology } from './topology/messaging-topology';
export type {
  GroupTopology,
  JournalTopology,
  MessagingTopology,
  RabbitQueueType,
} from './topology/messaging-topology';
export { MessagingTopologyMismatchError } from './topology/messaging-topology-mismatch.error';
export { MessagingTopologyMissingError } from './topology/messaging-topology-missing.error';

// Tables
export { MessagingAdminMigrations, MessagingMigrations, MysqlMessagingMigrations } from './migrations';
export { InboxRecordEntity } from './inbox/inbox-record.entity';
export { OutboxMessageEntity } from './outbox/outbox-message.entity';

/**
 * The library's TypeORM entities, for `entities: [...]` if you want to query its tables. PostgreSQL only:
 * TypeORM refuses their column types on MySQL and MariaDB (read the tables with SQL there).
 */
export const MessagingEntities = [OutboxMessageEntity, InboxRecordEntity];

// Errors: every one a MessagingError
export { MessagingError } from './errors/messaging.error';
export { InvalidEventDefinitionError } from './errors/invalid-event-definition.error';
export { InvalidKeySecretError } from './failure/invalid-key-secret.error';
export { InvalidMessagingOptionsError } from './errors/invalid-messaging-options.error';
export type { OptionIssue } from './errors/invalid-messaging-options.error';
export { InvalidRetryPolicyError } from './errors/invalid-retry-policy.error';
export { InvalidScheduleError } from './errors/invalid-schedule.error';
export { DuplicateMessageIdError } from './errors/duplicate-message-id.error';
export { LogicalDecodingUnavailableError } from './errors/logical-decoding-unavailable.error';
export { MessageHandlingError } from './errors/message-handling.error';
export { RetryLaterError } from './errors/retry-later.error';
export { PermanentError } from './errors/permanent.error';
export type { RetryLaterOptions } from './errors/retry-later.error';
export type { PermanentErrorOptions } from './errors/permanent.error';
export { InvalidRetryDelayError } from './errors/invalid-retry-delay.error';
export { MessagingConfigurationError } from './errors/messaging-configuration.error';
export { MessagingSchemaMissingError } from './errors/messaging-schema-missing.error';
export { MissingPeerDependencyError } from './errors/missing-peer-dependency.error';
export { NoActiveTransactionError } from './errors/no-active-transaction.error';
export { OutboxPayloadInvalidError } from './errors/outbox-payload-invalid.error';
export { ReplicationSlotInvalidatedError } from './errors/replication-slot-invalidated.error';
export { ReplicationSlotMissingError } from './errors/replication-slot-missing.error';
export { TransactionAbortedError } from './errors/transaction-aborted.error';
export { UnsupportedDatabaseError } from './errors/unsupported-database.error';
