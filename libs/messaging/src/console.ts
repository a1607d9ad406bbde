/**
 * The operations console: `MessagingConsoleModule`, server-rendered pages for outbox backlog, consumer
 * figures, dead letters, a four-eyes redrive and the audit log, on the same `RedriveService` as the
 * `nest-messaging` CLI. For an admin app of its own: it holds the admin broker credential.
 *
 * @packageDocumentation
 */
export * from './console/index';
// The redrive API the console's options take (`redrive`, `ledger`, `approverSigners`): the same classes as
// `nest-reliable-messaging/redrive`, so that an admin app imports from one place.
export * from './redrive';
