import { AsyncLocalStorage } from 'node:async_hooks';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import { WireMessage } from '../envelope/wire-message';
import { InvalidTenantError } from '../errors/invalid-tenant.error';
import { TenantRequiredError } from '../errors/tenant-required.error';
import { UnknownTenantError } from '../errors/unknown-tenant.error';
import { InboxWriters } from '../inbox/inbox-writers';
import { InboxService } from '../inbox/inbox.service';
import { MESSAGING_CLOCK, MESSAGING_RESOLVED_OPTIONS, MESSAGING_TRANSPORT } from '../messaging.constants';
import { checkMessagingSchema } from '../messaging-lifecycle';
import { MessageTracing } from '../observability/message-tracing';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { OutboxService } from '../outbox/outbox.service';
import { TransactionHost } from '../transaction/transaction-host';
import { MessageTransport } from '../transports/message-transport.interface';
import { FairTurns } from '../common/fair-turns';
import { TenantAdmission, TenantRouting } from '../transaction/tenant-routing';
import { readTenant } from '../envelope/tenant-signature';
import { TenantTransactionHost } from './tenant-transaction-host';
import { TenantUnit, TenantUnitShared } from './tenant-unit';

/** A tenant's name: letters, digits, `_`, `-`, `.`; 1 to 63 characters, starting with a letter or digit. */
const TENANT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;
/** The metric label of the tenants beyond `tenants.maxLabelledTenants`. */
export const OTHER_TENANTS_LABEL = '_other';
/** A claim that takes longer than this gives its turn back (a database that hangs keeps no turn). */
const TURN_HOLD_MS = 2_000;
/** How long the health and metrics wait for one tenant's database. */
const STATUS_TIMEOUT_MS = 2_000;

/** What `MessagingTenants.remove()` found and did. */
export interface TenantRemoval {
  /** The tenant removed. */
  readonly tenant: string;
  /**
   * Rows the tenant's outbox still held unpublished: kept in its database (nothing is deleted), published when
   * the tenant is added again. Undefined when its database did not answer.
   */
  readonly pendingMessages: number | undefined;
  /** Scheduled messages not yet due, kept likewise. Undefined when its database did not answer. */
  readonly scheduledMessages: number | undefined;
}

/** One tenant as the health check and `MessagingTenants.status()` see it. */
export interface TenantStatus {
  /** The tenant's name. */
  readonly tenant: string;
  /** The tenant's database answered. */
  readonly up: boolean;
  /** Unpublished outbox rows (0 when the database did not answer). */
  readonly pending: number;
  /** Age of the oldest unpublished row, ms. */
  readonly oldestPendingAgeMs: number;
  /** Why it is down. */
  readonly error?: string;
  /**
   * With `relay.mode: 'logical'`: why the tenant's logical relay cannot read its slot (the slot is missing or
   * invalidated, the server refuses replication, …; the details are in the log). Absent while it reads or
   * stands by.
   */
  readonly relayProblem?: string;
}

/**
 * The service's tenants, each with a database (or schema) of its own: register them with `add()` (at startup
 * from configuration, or at runtime when a customer signs up) and `remove()`; run a request's work as a tenant
 * with `run()`. With the `tenants` option on, `@Outbox()` and `OutboxService.add()` write to the current
 * tenant's database (never to a default one: no tenant is a `TenantRequiredError`), one relay per tenant
 * drains its outbox (claims in fair turns, a lease per database), and consumers apply each message in the
 * database of the tenant it was published from, checked by a signature (docs/guide/17-tenants.md).
 */
@Injectable()
export class MessagingTenants implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(MessagingTenants.name);
  private readonly context = new AsyncLocalStorage<string>();
  private readonly units = new Map<string, TenantUnit>();
  /** One host per DataSource for good: TypeORM's manager is joined to one transaction context once. */
  private readonly hosts = new WeakMap<DataSource, TenantTransactionHost>();
  private readonly labels = new Set<string>();
  private readonly shared?: TenantUnitShared;
  private started = false;
  private stopping = false;

  /** @internal Created by Nest; inject it. */
  constructor(
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
    @Inject(MESSAGING_CLOCK) private readonly clock: Clock,
    @Inject(MESSAGING_TRANSPORT) transport: MessageTransport,
    private readonly metrics: MessagingMetrics,
    tracing: MessageTracing,
    inboxWriters: InboxWriters,
  ) {
    const tenants = options.tenants;
    if (!tenants) return;
    this.shared = {
      options,
      signingKey: tenants.signingKey,
      clock,
      transport,
      metrics,
      tracing,
      inboxWriters,
      turns: new FairTurns(tenants.concurrentClaims, clock, TURN_HOLD_MS),
    };
    metrics.onScrape(() => this.exportFigures());
  }

  /** True when the `tenants` option is on. */
  get enabled(): boolean {
    return this.shared !== undefined;
  }

  /**
   * Registers a tenant and its DataSource (initialized, with the library's migrations run in it: a database
   * of its own, or a schema of its own on a shared PostgreSQL). Its relay starts at once when the application
   * runs already. Throws an `InvalidTenantError` (a bad or taken name, a DataSource another tenant has, tenants
   * off, a database other than PostgreSQL with `relay.mode: 'logical'`) or the startup errors of a database the
   * library cannot use (`MessagingSchemaMissingError`, `UnsupportedDatabaseError`; with `relay.mode: 'logical'`,
   * `LogicalDecodingUnavailableError` and `ReplicationSlotMissingError` for the tenant's slot,
   * `messaging_tenant_<name>`: `nest-messaging relay slot create --tenant <name>`).
   */
  async add(tenant: string, dataSource: DataSource): Promise<void> {
    const shared = this.shared;
    if (!shared) {
      throw new InvalidTenantError(
        tenant,
        'tenants are off: set the tenants option of MessagingModule.forRoot().',
      );
    }
    if (!TENANT_NAME.test(tenant)) {
      throw new InvalidTenantError(
        tenant,
        'a tenant name is 1-63 letters, digits, "_", "-" or ".", starting with a letter or digit.',
      );
    }
    if (this.units.has(tenant)) throw new InvalidTenantError(tenant, 'a tenant of that name is registered.');
    const other = [...this.units.values()].find((unit) => unit.dataSource === dataSource);
    if (other) {
      throw new InvalidTenantError(
        tenant,
        `its DataSource is tenant '${other.name}'s: each tenant needs its own.`,
      );
    }
    if (!dataSource.isInitialized) {
      throw new InvalidTenantError(
        tenant,
        'its DataSource is not initialized: await dataSource.initialize() first.',
      );
    }
    let host = this.hosts.get(dataSource);
    if (host && host.tenant !== tenant) {
      throw new InvalidTenantError(
        tenant,
        `its DataSource was tenant '${host.tenant}'s: each tenant needs its own.`,
      );
    }
    host ??= new TenantTransactionHost(dataSource, tenant, this.context);
    const unit = new TenantUnit(tenant, dataSource, host, this.labelFor(tenant), shared);
    if (this.options.relay.notify && unit.outboxStore.notifyChannel === undefined) {
      throw new InvalidTenantError(
        tenant,
        'relay.notify needs PostgreSQL; this tenant database has no LISTEN/NOTIFY.',
      );
    }
    if (this.options.relay.mode === 'logical' && dataSource.options.type !== 'postgres') {
      throw new InvalidTenantError(
        tenant,
        `relay.mode 'logical' reads PostgreSQL's log; this tenant's database is '${String(dataSource.options.type)}'. ` +
          "Keep tenants on MySQL/MariaDB in a service with relay.mode 'poll'.",
      );
    }
    await checkMessagingSchema(unit.outboxStore, unit.inboxStore);
    await unit.check();
    if (this.units.has(tenant)) throw new InvalidTenantError(tenant, 'a tenant of that name is registered.');
    this.hosts.set(dataSource, host);
    if (unit.label !== OTHER_TENANTS_LABEL) this.labels.add(unit.label);
    this.units.set(tenant, unit);
    unit.attach();
    if (this.started && !this.stopping && this.options.relay.enabled) unit.start();
    this.logger.log(`Tenant '${tenant}' added (${String(dataSource.options.type)}).`);
  }

  /**
   * Unregisters a tenant: its relay stops (its batch in flight finishes, its leases are released), its writes
   * are refused from now on (`UnknownTenantError`) and its messages held by consumers. Nothing is deleted: rows
   * still unpublished stay in its outbox (said in the result and the log) and go out when it is added again.
   * Its DataSource stays the application's to close. Unknown: `UnknownTenantError`.
   */
  async remove(tenant: string): Promise<TenantRemoval> {
    const unit = this.units.get(tenant);
    if (!unit) throw new UnknownTenantError(tenant, 'MessagingTenants.remove()');
    this.units.delete(tenant);
    this.labels.delete(unit.label);
    this.metrics.tenantPublished.remove({ tenant: unit.label });
    await unit.stop();
    const { pendingMessages, scheduledMessages } = await withTimeout(
      Promise.all([unit.backlog(), unit.outboxStore.scheduledFigures()]),
      STATUS_TIMEOUT_MS,
      this.clock,
    ).then(
      ([backlog, scheduled]) => ({
        pendingMessages: backlog.pending,
        scheduledMessages: scheduled.scheduled,
      }),
      () => ({ pendingMessages: undefined, scheduledMessages: undefined }),
    );
    if (pendingMessages === undefined || scheduledMessages === undefined) {
      this.logger.warn(
        `Tenant '${tenant}' removed; its database did not answer: unpublished messages, if any, stay in its outbox.`,
      );
    } else if (pendingMessages + scheduledMessages > 0) {
      this.logger.warn(
        `Tenant '${tenant}' removed with ${pendingMessages} unpublished and ${scheduledMessages} scheduled ` +
          'message(s): kept in its database, published when the tenant is added again.',
      );
    } else this.logger.log(`Tenant '${tenant}' removed.`);
    return { tenant, pendingMessages, scheduledMessages };
  }

  /** Runs `work` as `tenant`: `@Outbox()` methods and `OutboxService.add()` in it write to that tenant. */
  run<T>(tenant: string, work: () => T): T {
    return this.context.run(tenant, work);
  }

  /** The current tenant (`run()`, or the tenant of the message a handler applies); undefined outside. */
  current(): string | undefined {
    return this.context.getStore();
  }

  /** The registered tenants, in the order they were added. */
  names(): string[] {
    return [...this.units.keys()];
  }

  /** The DataSource of `tenant` (default: the current one). Throws `TenantRequiredError` or `UnknownTenantError`. */
  dataSource(tenant?: string): DataSource {
    return this.unitOf(tenant, 'MessagingTenants.dataSource()').dataSource;
  }

  /**
   * The transactions of `tenant` (default: the current one): `run()`, `manager`, `afterCommit()` on its
   * database. Throws `TenantRequiredError` or `UnknownTenantError`.
   */
  transactionHost(tenant?: string): TransactionHost {
    return this.unitOf(tenant, 'MessagingTenants.transactionHost()').host;
  }

  /** Each tenant's database, outbox backlog and oldest pending row (a database that does not answer is down). */
  async status(): Promise<TenantStatus[]> {
    return Promise.all(
      [...this.units.values()].map(async (unit): Promise<TenantStatus> => {
        const relayProblem = unit.relayProblem();
        const relay = relayProblem === undefined ? {} : { relayProblem };
        try {
          const { pending, oldestAgeMs } = await withTimeout(unit.backlog(), STATUS_TIMEOUT_MS, this.clock);
          return { tenant: unit.name, up: true, pending, oldestPendingAgeMs: oldestAgeMs, ...relay };
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          return {
            tenant: unit.name,
            up: false,
            pending: 0,
            oldestPendingAgeMs: 0,
            error: message,
            ...relay,
          };
        }
      }),
    );
  }

  /** @internal The current tenant's outbox (the module's `OutboxService` hands its calls on to it). */
  outbox(operation: string): OutboxService {
    return this.unitOf(undefined, operation).outbox;
  }

  /** @internal The current tenant's transactions (`@Outbox()` methods run in them). */
  transactions(operation: string): TransactionHost {
    return this.unitOf(undefined, operation).host;
  }

  /** @internal What a consumer may do with a delivery's tenant. */
  admit(group: string, wire: WireMessage): TenantAdmission {
    const shared = this.shared;
    if (!shared) return { kind: 'off' };
    const claim = readTenant(shared.signingKey, wire);
    if (claim.kind === 'none') {
      this.metrics.tenantRefused.inc({ group, reason: 'missing' });
      return { kind: 'missing' };
    }
    if (claim.kind === 'forged') {
      this.metrics.tenantRefused.inc({ group, reason: 'forged' });
      return { kind: 'forged' };
    }
    if (!this.units.has(claim.tenant)) {
      this.metrics.tenantRefused.inc({ group, reason: 'unknown' });
      return { kind: 'unknown' };
    }
    return { kind: 'tenant', tenant: claim.tenant };
  }

  /** @internal The tenant's inbox; undefined when it is not registered (any more). */
  inbox(tenant: string): InboxService | undefined {
    return this.units.get(tenant)?.inbox;
  }

  /**
   * @internal Whether `tenant`'s database answers `select 1` within `timeoutMs` (the parked deliveries' drain
   * asks before it locks them); true when it is not registered.
   */
  async answers(tenant: string, timeoutMs: number): Promise<boolean> {
    const unit = this.units.get(tenant);
    if (!unit) return true;
    try {
      await withTimeout(unit.dataSource.query('select 1'), timeoutMs, this.clock);
      return true;
    } catch {
      return false;
    }
  }

  /** @internal Starts the relays of the tenants added so far. */
  onApplicationBootstrap(): void {
    this.started = true;
    if (!this.options.relay.enabled) return;
    for (const unit of this.units.values()) unit.start();
  }

  /**
   * @internal Stops every tenant's relay and jobs (Nest runs this after `onModuleDestroy`: the tenants stay
   * registered, so that consumers finishing their deliveries still reach their inboxes).
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.units.values()].map((unit) => unit.stop()));
  }

  private unitOf(tenant: string | undefined, operation: string): TenantUnit {
    if (!this.shared) {
      throw new InvalidTenantError(tenant ?? '', `${operation}: tenants are off (the tenants option).`);
    }
    const name = tenant ?? this.context.getStore();
    if (name === undefined) throw new TenantRequiredError(operation);
    const unit = this.units.get(name);
    if (!unit) throw new UnknownTenantError(name, operation);
    return unit;
  }

  /** The tenant's own name while fewer than `maxLabelledTenants` are labelled; `_other` beyond. */
  private labelFor(tenant: string): string {
    const max = this.options.tenants?.maxLabelledTenants ?? 0;
    return this.labels.size < max ? tenant : OTHER_TENANTS_LABEL;
  }

  private async exportFigures(): Promise<void> {
    const statuses = await this.status();
    const pending = new Map<string, number>();
    const up = new Map<string, number>();
    for (const status of statuses) {
      const label = this.units.get(status.tenant)?.label ?? OTHER_TENANTS_LABEL;
      pending.set(label, (pending.get(label) ?? 0) + status.pending);
      up.set(label, Math.min(up.get(label) ?? 1, status.up ? 1 : 0));
    }
    this.metrics.tenantPending.reset();
    this.metrics.tenantReachable.reset();
    for (const [label, count] of pending) this.metrics.tenantPending.set({ tenant: label }, count);
    for (const [label, value] of up) this.metrics.tenantReachable.set({ tenant: label }, value);
  }
}

/**
 * Compile-time check: the registry is what the outbox and the consumers see as `TenantRouting` (provided as it
 * with `useExisting`; not declared with `implements`, which would put the internal contract in the public API).
 */
const _routing = (tenants: MessagingTenants): TenantRouting<OutboxService, InboxService> => tenants;
void _routing;

/** `promise`, or a rejection after `ms` on `clock`. */
async function withTimeout<T>(promise: Promise<T>, ms: number, clock: Clock): Promise<T> {
  let cancel: (() => void) | undefined;
  const timeout = new Promise<never>((_, reject) => {
    cancel = clock.setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    cancel?.();
  }
}
