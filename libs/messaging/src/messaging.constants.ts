/** Metadata keys and injection tokens, in one place. */
export const OUTBOX_METADATA = 'nest-reliable-messaging:outbox';
export const IDEMPOTENT_HANDLER_METADATA = 'nest-reliable-messaging:idempotent-handler';
export const RETRY_POLICY_METADATA = 'nest-reliable-messaging:retry-policy';

/** The TypeORM DataSource the library writes its tables in (the application's, by default). */
export const MESSAGING_DATA_SOURCE = Symbol('MESSAGING_DATA_SOURCE');
/** The broker transport (`MessageTransport`). */
export const MESSAGING_TRANSPORT = Symbol('MESSAGING_TRANSPORT');
/** Validated options with every default filled in (`ResolvedMessagingOptions`). */
export const MESSAGING_RESOLVED_OPTIONS = Symbol('MESSAGING_RESOLVED_OPTIONS');
/** The library's time, timers and jitter (`Clock`; `systemClock` unless overridden). */
export const MESSAGING_CLOCK = Symbol('MESSAGING_CLOCK');
/** With `relay.mode: 'logical'`: the slot, publication and message prefix of this outbox (`LogicalNames`). */
export const MESSAGING_LOGICAL_NAMES = Symbol('MESSAGING_LOGICAL_NAMES');
/**
 * Never provided: the default relay has none. `MessagingTenants` constructs each tenant's relay with its
 * `TenantRelaySettings`.
 */
export const MESSAGING_TENANT_RELAY = Symbol('MESSAGING_TENANT_RELAY');
