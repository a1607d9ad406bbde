/**
 * Internals for tests and benchmarks: the transport, the relay and its store, the consumer orchestrator,
 * the wire format and the CLI's entry. Not part of the public API: these change without a major version.
 *
 * @packageDocumentation
 */
export * from './messaging.tokens';
export { FakeClock } from './common/fake-clock';
export { systemClock } from './common/clock';
export { MESSAGING_RESOLVED_OPTIONS, MESSAGING_TRANSPORT } from './messaging.constants';
export { resolveMessagingOptions } from './options/resolve-messaging-options';
export type { ResolvedMessagingOptions } from './options/resolve-messaging-options';

// The wire
export { decodeEnvelope, encodeEnvelope } from './envelope/envelope-codec';
export type { DecodeFailure, DecodeResult } from './envelope/envelope-codec';
export type { MessageEnvelope } from './envelope/message-envelope';
export type { WireMessage } from './envelope/wire-message';
export { destinationNames } from './topology/destination-names';
export { deadLetterCopy, failureHeaders, FAILURE_HEADER_NAMES } from './failure/failure-copy';
export type { DeadLetterCopyPolicy } from './failure/failure-copy';
export { parseKeySecret } from './failure/key-secret';
export type { KeySecret } from './failure/key-secret';

// Transports
export type { MessageTransport, TransportHealth } from './transports/message-transport.interface';
export type { PublishOutcome } from './transports/publish-outcome';
export type { ConsumerHandle, Subscription } from './transports/delivery-contract';
export type { TransportCapabilities } from './retry/transport-capabilities';

// The relay and the consumers
export { OutboxRelay } from './outbox/outbox-relay';
export type { RelayRoundResult } from './outbox/outbox-relay';
export { OutboxRetention } from './outbox/outbox-retention';
export { LogicalRelay } from './outbox/logical/logical-relay';
export type {
  LogicalRelayState,
  LogicalRelayStatus,
  LogicalRoundResult,
} from './outbox/logical/logical-relay';
export { logicalNames, tenantLogicalNames } from './outbox/logical/logical-names';
export { decodeLogicalMessage, encodeLogicalMessage } from './outbox/logical/logical-message-codec';
export { decodePgoutput } from './outbox/logical/replication-protocol';
export type { LogicalNames } from './outbox/logical/logical-names';
export {
  countUnreadMessages,
  createReplicationSlot,
  dropReplicationSlot,
  readReplicationSlot,
} from './outbox/logical/replication-slot';
export type { ReplicationSlotState, SqlRunner } from './outbox/logical/replication-slot';
export { InboxRetention } from './inbox/inbox-retention';
export { OutboxStore } from './outbox/outbox-store';
export { InboxStore } from './inbox/inbox-store';
export { ParkedStore } from './inbox/parked-store';
export type { ParkedDelivery, ParkedLane } from './inbox/parked-store';
export { messagingDialect } from './database/messaging-dialect';
export {
  typeormPostgresConnectionConfig,
  typeormPostgresPool,
} from './transaction/typeorm-postgres-pool.patch';
export type { MessagingDialect } from './database/messaging-dialect';
export { ConsumerOrchestrator } from './consumers/consumer-orchestrator';

// Redrive internals and the CLI
export { signApproval } from './redrive/redrive-approval';
export type { CliIo } from './cli/cli-io';
export { runMessagingCli } from './cli/messaging-cli';

// Types the internals above name (so the testing entry's API report names each of them)
export type { CancelTimer, Clock } from './common/clock';
export type { FailedDelivery, FailureSettler } from './consumers/failure-settler';
export type { Failure, SettleDecision } from './consumers/settle-decision';
export type {
  DeadLetterDecision,
  DeadLetterReason,
  PauseAndRetryDecision,
  RejectDecision,
  RetryDecision,
  RetryDestinationDecision,
  RetryInlineDecision,
} from './retry/retry-decision';
export type { MessageContext } from './consumers/message-context';
export type { HandlerDefinition, HandlerRegistry } from './consumers/handler-registry';
export type { DeliveryPipeline } from './consumers/delivery-pipeline';
export type { MessagingTables } from './tables/messaging-tables';
export type { FailureFacts } from './failure/failure-copy';
export type { ApproverSigner } from './redrive/approvals/approver-keys';
export type { ApprovalGrant, RedriveApproval } from './redrive/redrive-approval';
export type { MessagePosition, PlannedMessage, RedrivePlan, SkippedMessage } from './redrive/redrive-plan';
export type { PlanAction, PlanSelection } from './redrive/plan-selection';
export type { ReadCutOff } from './redrive/read-budget';
export { FailureCategory } from './errors/failure-category';
export type { InboxKey, InboxRecord } from './inbox/inbox-store';
export { InboxService } from './inbox/inbox.service';
export type { InboxBatch, InboxEntry } from './inbox/inbox-batch';
export type { InboxDelivery, InboxOutcome, InboxWork } from './inbox/inbox-delivery';
export type { EventDefinition } from './envelope/event-definition';
export type {
  OpenTransaction,
  RunInTransactionOptions,
  TransactionHost,
} from './transaction/transaction-host';
export type { TransactionScope } from './transaction/transaction-scope';
export type {
  ConsumerOptions,
  DeadLetterOptions,
  KafkaProducerClient,
  KafkaSaslOptions,
  KafkaTransportOptions,
  MessagingModuleOptions,
  OutboxRetentionOptions,
  RabbitMqTransportOptions,
  RelayMode,
  RelayOptions,
  TopologyMode,
  TransportOptions,
} from './messaging-options.interface';
export type { MessageTracing, PublishTrace } from './observability/message-tracing';
export type { MessagingMetrics } from './observability/messaging-metrics';
export type { messagingOptionsSchema } from './options/messaging-options.schema';
export type { ParsedMessagingOptions } from './options/resolve-messaging-options';
export type { DecodedLogicalMessage } from './outbox/logical/logical-message-codec';
export type { Lsn } from './outbox/logical/lsn';
export type { PgoutputMessage } from './outbox/logical/replication-protocol';
export type { SlotWalStatus } from './outbox/logical/replication-slot';
export type { ClaimedOutboxRow, FailedOutboxRow, NewOutboxRow } from './outbox/outbox-row';
export type { ClaimedRows, OutboxBacklog, OutboxStoreSettings } from './outbox/outbox-store';
export type { RelayWakeup, WakeSignal } from './outbox/relay-wakeup';
export type { Schedule } from './outbox/schedule';
export type { ClassificationRule } from './retry/error-classifier';
export { RetryMode, RetryOrdering } from './retry/retry-policy.interface';
export type { BackoffOptions, ResolvedRetryPolicy, RetryPolicyOptions } from './retry/retry-policy.interface';
export type {
  GroupTopology,
  JournalTopology,
  MessagingTopology,
  RabbitQueueType,
} from './topology/messaging-topology';
export type { BrokerRefusal } from './transports/broker-refusal';
export type { Delivery, DeliveryControl, DeliveryOrigin, Settlement } from './transports/delivery-contract';
export type { PublishOptions } from './transports/message-transport.interface';
export type { OutboxFigures, RelaySlotFigures, RunningConsumers } from './observability/observed-sources';
export type { InboxWriters } from './inbox/inbox-writers';
export type { RunState } from './consumers/run-state';
export { stampTenant, tenantSignature, tenantSigningKey } from './envelope/tenant-signature';
