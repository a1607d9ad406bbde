/**
 * Internals for tests and benchmarks: the transport, the relay and its store, the consumer orchestrator,
 * the wire format and the CLI's entry. Not part of the public API: these change without a major version.
 *
 * @packageDocumentation
 */
export * from './messaging.tokens';
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
export type { ConsumerHandle, Subscription } from './transports/subscription.interface';
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
export { logicalNames } from './outbox/logical/logical-names';
export { decodeLogicalMessage } from './outbox/logical/logical-message-codec';
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
export { messagingDialect } from './database/messaging-dialect';
export type { MessagingDialect } from './database/messaging-dialect';
export { ConsumerOrchestrator } from './consumers/consumer-orchestrator';

// Redrive internals and the CLI
export { signApproval } from './dead-letter/redrive/redrive-approval';
export type { CliIo } from './cli/cli-io';
export { runMessagingCli } from './cli/messaging-cli';
