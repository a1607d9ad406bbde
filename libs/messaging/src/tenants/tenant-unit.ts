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
import { tenantLogicalNames } from '../outbox/logical/logical-names';
import { LogicalRelay } from '../outbox/logical/logical-relay';
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
  readonly inboxWriters: InboxWriters;
  readonly turns: FairTurns;
}

/**
 * One tenant's share of the library: the same stores, outbox service, relays and retention jobs the module
 * runs for its own DataSource, built for the tenant's (no rule of theirs is written twice). The relays publish
 * through a transport that stamps and signs the tenant on every message. With `relay.mode: 'logical'` the
 * tenant's writes go to its database's log, read by a logical relay of its own from the slot named after the
 * tenant (`tenantLogicalNames`); its polling relay publishes what that one parks and the scheduled messages.
 */
export class TenantUnit {
  readonly outboxStore: OutboxStore;
  readonly inboxStore: InboxStore;
  readonly outbox: OutboxService;
  readonly inbox: InboxService;
  readonly relay: OutboxRelay;
  /** `relay.mode: 'logical'`: the relay that reads the tenant's slot. */
  readonly logicalRelay?: LogicalRelay;
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
    const names = tenantLogicalNames(name);
    this.outbox = new OutboxService(
      this.host,
      this.outboxStore,
      wakeup,
      options,
      new LogicalMessageWriter(names),
      clock,
    );
    this.inbox = new InboxService(this.host, this.inboxStore);
    const transport = tenantTransport(shared.transport, name, shared.signingKey);
    // What the broker confirmed of this tenant's, from either relay.
    const countPublished = ({ confirmed }: { readonly confirmed: number }) => {
      if (confirmed > 0) shared.metrics.tenantPublished.inc({ tenant: label }, confirmed);
    };
    if (options.relay.mode === 'logical') {
      this.logicalRelay = new LogicalRelay(
        dataSource,
        transport,
        options,
        names,
        clock,
        wakeup,
        shared.metrics,
        shared.tracing,
        { tenant: name },
      );
      this.logicalRelay.onRound(countPublished);
    }
    this.relay = new OutboxRelay(
      this.outboxStore,
      transport,
      wakeup,
      options,
      shared.metrics,
      shared.tracing,
      clock,
      { tenant: name, turns: shared.turns },
    );
    this.relay.onRound(countPublished);
    this.outboxRetention = new OutboxRetention(this.outboxStore, clock, options);
    this.inboxRetention = new InboxRetention(this.inboxStore, shared.inboxWriters, clock, options);
  }

  /**
   * What the tenant's relays need of its database before it is registered: with `relay.mode: 'logical'`,
   * PostgreSQL with `wal_level = logical` and the tenant's slot (`LogicalDecodingUnavailableError`,
   * `ReplicationSlotMissingError` name what is missing).
   */
  async check(): Promise<void> {
    await this.logicalRelay?.onModuleInit();
  }

  /** With `relay.mode: 'logical'`: why the tenant's logical relay cannot read its slot (a fixed phrase). */
  relayProblem(): string | undefined {
    const status = this.logicalRelay?.status();
    return status?.state === 'failing' ? (status.problem ?? 'the logical relay cannot read') : undefined;
  }

  /** Joins the application's repositories of the DataSource to this tenant's transactions, and watches them. */
  attach(): void {
    this.host.onModuleInit();
  }

  /** Starts the relay and the retention jobs (once the application has started). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.logicalRelay?.onApplicationBootstrap();
    this.relay.onApplicationBootstrap();
    this.outboxRetention.onApplicationBootstrap();
    this.inboxRetention.onApplicationBootstrap();
  }

  /** Stops the relay (its in-flight batch finishes, its leases are released) and the jobs; detaches. */
  async stop(): Promise<void> {
    if (this.running) {
      this.running = false;
      await this.logicalRelay?.beforeApplicationShutdown();
      await this.relay.beforeApplicationShutdown();
      await this.outboxRetention.onApplicationShutdown();
      await this.inboxRetention.onApplicationShutdown();
    }
    this.host.onModuleDestroy();
  }

  /**
   * Unconfirmed messages of the tenant and the age of the oldest: rows in its outbox, and with `relay.mode:
   * 'logical'` the messages its logical relay read and the broker has not confirmed. Throws when the database
   * does not answer.
   */
  async backlog(): Promise<{ pending: number; oldestAgeMs: number }> {
    const slot = this.logicalRelay?.status();
    const rows = await this.outboxStore.backlog();
    return {
      pending: rows.reduce((sum, row) => sum + row.pending, slot?.unconfirmed ?? 0),
      oldestAgeMs: rows.reduce(
        (oldest, row) => Math.max(oldest, row.oldestAgeMs),
        (slot?.lagSeconds ?? 0) * 1000,
      ),
    };
  }
}
