import { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import { messagingDialect } from '../database/messaging-dialect';
import { InboxRetention } from '../inbox/inbox-retention';
import { InboxStore } from '../inbox/inbox-store';
import { InboxWriters } from '../inbox/inbox-writers';
import { InboxService } from '../inbox/inbox.service';
import { MessageTracing } from '../observability/message-tracing';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { LogicalMessageWriter } from '../outbox/logical/logical-message-writer';
import { OutboxRelay } from '../outbox/outbox-relay';
import { OutboxRetention } from '../outbox/outbox-retention';
import { OutboxStore } from '../outbox/outbox-store';
import { OutboxService } from '../outbox/outbox.service';
import { RelayWakeup } from '../outbox/relay-wakeup';
import { MessageTransport } from '../transports/message-transport.interface';
import { FairTurns } from '../common/fair-turns';
import { TenantTransactionHost } from './tenant-transaction-host';
import { tenantTransport } from './tenant-transport';

/** What every tenant's unit shares: the service's options, clock, broker, metrics and the tenants' turns. */
export interface TenantUnitShared {
  readonly options: ResolvedMessagingOptions;
  readonly signingKey: Buffer;
  readonly clock: Clock;
  readonly transport: MessageTransport;
  readonly metrics: MessagingMetrics;
  readonly tracing: MessageTracing;
  readonly logical: LogicalMessageWriter;
  readonly inboxWriters: InboxWriters;
  readonly turns: FairTurns;
}

/**
 * One tenant's share of the library: the same stores, outbox service, relay and retention jobs the module
 * runs for its own DataSource, built for the tenant's (no rule of theirs is written twice). The relay publishes
 * through a transport that stamps and signs the tenant on every message.
 */
export class TenantUnit {
  readonly outboxStore: OutboxStore;
  readonly inboxStore: InboxStore;
  readonly outbox: OutboxService;
  readonly inbox: InboxService;
  readonly relay: OutboxRelay;
  private readonly outboxRetention: OutboxRetention;
  private readonly inboxRetention: InboxRetention;
  private running = false;

  constructor(
    readonly name: string,
    readonly dataSource: DataSource,
    /** The tenant's transactions: one per DataSource for good (its manager is joined to it once). */
    readonly host: TenantTransactionHost,
    /** The value of its `tenant` metric label (`_other` beyond `tenants.maxLabelledTenants`). */
    readonly label: string,
    shared: TenantUnitShared,
  ) {
    const { options, clock } = shared;
    const dialect = messagingDialect(dataSource);
    this.outboxStore = dialect.outboxStore(dataSource, { keepSent: options.retention.sentRetentionMs > 0 });
    this.inboxStore = dialect.inboxStore(dataSource);
    const wakeup = new RelayWakeup();
    this.outbox = new OutboxService(this.host, this.outboxStore, wakeup, options, shared.logical, clock);
    this.inbox = new InboxService(this.host, this.inboxStore);
    this.relay = new OutboxRelay(
      this.outboxStore,
      tenantTransport(shared.transport, name, shared.signingKey),
      wakeup,
      options,
      shared.metrics,
      shared.tracing,
      clock,
      { tenant: name, turns: shared.turns },
    );
    this.relay.onRound(({ confirmed }) => {
      if (confirmed > 0) shared.metrics.tenantPublished.inc({ tenant: label }, confirmed);
    });
    this.outboxRetention = new OutboxRetention(this.outboxStore, clock, options);
    this.inboxRetention = new InboxRetention(this.inboxStore, shared.inboxWriters, clock, options);
  }

  /** Joins the application's repositories of the DataSource to this tenant's transactions, and watches them. */
  attach(): void {
    this.host.onModuleInit();
  }

  /** Starts the relay and the retention jobs (once the application has started). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.relay.onApplicationBootstrap();
    this.outboxRetention.onApplicationBootstrap();
    this.inboxRetention.onApplicationBootstrap();
  }

  /** Stops the relay (its in-flight batch finishes, its leases are released) and the jobs; detaches. */
  async stop(): Promise<void> {
    if (this.running) {
      this.running = false;
      await this.relay.beforeApplicationShutdown();
      await this.outboxRetention.onApplicationShutdown();
      await this.inboxRetention.onApplicationShutdown();
    }
    this.host.onModuleDestroy();
  }

  /** Unconfirmed rows in the tenant's outbox and the age of the oldest; throws when the database does not answer. */
  async backlog(): Promise<{ pending: number; oldestAgeMs: number }> {
    const rows = await this.outboxStore.backlog();
    return {
      pending: rows.reduce((sum, row) => sum + row.pending, 0),
      oldestAgeMs: rows.reduce((oldest, row) => Math.max(oldest, row.oldestAgeMs), 0),
    };
  }
}
