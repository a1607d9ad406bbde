import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  MESSAGING_DATA_SOURCE,
  MESSAGING_RESOLVED_OPTIONS,
  MESSAGING_TRANSPORT,
} from '../messaging.constants';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { describeRefusal } from '../transports/broker-refusal';
import { MessageTransport } from '../transports/message-transport.interface';
import {
  HeldMessageFigures,
  OutboxFigures,
  RelaySlotFigures,
  RunningConsumers,
  TenantFigures,
} from './observed-sources';

/**
 * One health check's result, keyed by the check's name: the shape `@nestjs/terminus` expects from an
 * indicator (its `HealthIndicatorResult`), so the results go straight into `HealthCheckService.check()`.
 */
export type MessagingHealthResult<Key extends string = string> = Record<
  Key,
  { status: 'up' | 'down'; [detail: string]: unknown }
>;

/** When `MessagingHealthIndicator.relay()` reports the logical relay's slot as degraded. */
export interface RelayHealthLimits {
  /** WAL the slot may hold past its confirmed position, bytes. Default 1073741824 (1 GiB). */
  maxLagBytes?: number;
  /** Age of the oldest commit the reading instance holds unconfirmed, seconds. Default 60. */
  maxLagSeconds?: number;
}

/**
 * Health checks of the library's dependencies, in the shape `@nestjs/terminus` takes (the library itself
 * does not need terminus):
 *
 * ```ts
 * @Get('health') @HealthCheck()
 * check() {
 *   return this.health.check([
 *     () => this.messaging.database(), () => this.messaging.broker(), () => this.messaging.outboxBacklog(),
 *   ]);
 * }
 * ```
 *
 * A failed check says what is down in a fixed phrase; the error itself (hosts, ports, driver messages) goes to
 * the log, never to whoever can reach the health endpoint.
 */
@Injectable()
export class MessagingHealthIndicator {
  private readonly logger = new Logger(MessagingHealthIndicator.name);

  /** @internal Created by Nest; inject it. */
  constructor(
    private readonly store: OutboxFigures,
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    @Inject(MESSAGING_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
    private readonly logical: RelaySlotFigures,
    private readonly held: HeldMessageFigures,
    private readonly groups: RunningConsumers,
    @Optional() private readonly tenantFigures?: TenantFigures,
  ) {}

  /**
   * Tenants on: each tenant's database answers, its logical relay (`relay.mode: 'logical'`) can read its slot,
   * and its outbox keeps up (oldest pending message younger than `maxAgeMs`, default 60 s). Down when any does
   * not, naming them in `down` (tenants are the application's own names; their number is the application's);
   * `tenants` gives each one's pending messages. Up with no tenants.
   */
  async tenants<Key extends string = 'tenants'>(
    key: Key = 'tenants' as Key,
    maxAgeMs = 60_000,
  ): Promise<MessagingHealthResult<Key>> {
    const statuses = (await this.tenantFigures?.status()) ?? [];
    const down = statuses
      .filter((s) => !s.up || s.relayProblem !== undefined || s.oldestPendingAgeMs > maxAgeMs)
      .map((s) => s.tenant);
    const tenants = Object.fromEntries(
      statuses.map((s) => [
        s.tenant,
        {
          up: s.up,
          pending: s.pending,
          oldestPendingAgeMs: s.oldestPendingAgeMs,
          ...(s.relayProblem === undefined ? {} : { relayProblem: s.relayProblem }),
        },
      ]),
    );
    if (down.length === 0) return result(key, 'up', { tenants, maxAgeMs });
    return result(key, 'down', {
      tenants,
      down,
      maxAgeMs,
      error: "tenants' databases do not answer, their relay cannot read, or their outbox does not keep up",
    });
  }

  /**
   * The consumers receive deliveries: down while a group started is still joining (on Kafka, after a restart
   * the broker waits for the group's other members, a killed one's session to expire; the application
   * serves meanwhile) or subscribing again (the broker away). A readiness check, not a liveness one: the
   * process is fine meanwhile. Details: the groups `running` and `joining`. Up when no consumer is started.
   */
  consumers<Key extends string = 'consumers'>(key: Key = 'consumers' as Key): MessagingHealthResult<Key> {
    const running = this.groups.runningGroups();
    const joining = this.groups.joiningGroups();
    if (joining.length === 0) return result(key, 'up', { running, joining });
    return result(key, 'down', {
      running,
      joining,
      error: 'consumer groups are still joining: they receive no messages yet',
    });
  }

  /** The database the outbox and inbox live in answers a query. */
  async database<Key extends string = 'database'>(
    key: Key = 'database' as Key,
  ): Promise<MessagingHealthResult<Key>> {
    try {
      await this.dataSource.query('select 1');
      return result(key, 'up');
    } catch (error) {
      this.logger.warn(`Health: the database did not answer: ${(error as Error).message}`);
      return result(key, 'down', { error: 'the database did not answer' });
    }
  }

  /** The broker answers (Kafka: a metadata request; RabbitMQ: the connection). */
  async broker<Key extends string = 'broker'>(
    key: Key = 'broker' as Key,
  ): Promise<MessagingHealthResult<Key>> {
    const health = await this.transport.checkHealth();
    if (health.connected) return result(key, 'up', { transport: this.transport.kind });
    if (health.refusal) {
      // Not an outage: it will not heal by itself. Say what to fix (an option's name, never a value).
      return result(key, 'down', {
        transport: this.transport.kind,
        error: describeRefusal(health.refusal),
        permanent: true,
        fix: health.refusal.setting,
      });
    }
    this.logger.warn(`Health: the broker did not answer: ${health.lastError ?? 'not connected'}`);
    return result(key, 'down', { transport: this.transport.kind, error: 'the broker did not answer' });
  }

  /**
   * The outbox is keeping up: down when its oldest pending row is older than `maxAgeMs` (default 60 s), the
   * sign of a relay that cannot publish (broker down, unroutable messages) or cannot keep pace.
   */
  async outboxBacklog<Key extends string = 'outbox'>(
    key: Key = 'outbox' as Key,
    maxAgeMs = 60_000,
  ): Promise<MessagingHealthResult<Key>> {
    try {
      const backlog = await this.store.backlog();
      const pending = backlog.reduce((sum, b) => sum + b.pending, 0);
      const oldestPendingAgeMs = backlog.reduce((max, b) => Math.max(max, b.oldestAgeMs), 0);
      const details = { pending, oldestPendingAgeMs, maxAgeMs };
      return oldestPendingAgeMs > maxAgeMs
        ? result(key, 'down', { ...details, degraded: true })
        : result(key, 'up', details);
    } catch (error) {
      this.logger.warn(`Health: reading the outbox backlog failed: ${(error as Error).message}`);
      return result(key, 'down', { error: 'reading the outbox backlog failed' });
    }
  }

  /**
   * Messages this instance holds because it cannot read them yet (an event version newer than it knows, one
   * older than its upcasters reach, an upcaster that failed): a warning, not an outage, since a rolling deploy
   * holds messages on purpose until the upgraded instances take them. Always `up`; while any is held the
   * details say how many, how long the oldest has been held and the window after which it is dead-lettered,
   * and `warning` says so in a fixed phrase. Alert on `messaging_consumer_oldest_held_age_seconds` instead.
   */
  heldMessages<Key extends string = 'heldMessages'>(
    key: Key = 'heldMessages' as Key,
  ): MessagingHealthResult<Key> {
    const { count, oldestHeldMs, windowMs } = this.held.heldNow();
    if (count === 0) return result(key, 'up', { held: 0 });
    return result(key, 'up', {
      held: count,
      oldestHeldSeconds: Math.round(oldestHeldMs / 1000),
      windowSeconds: Math.round(windowMs / 1000),
      warning:
        'messages are held that this instance cannot read yet (an event version or upcaster problem; a ' +
        'deploy in progress?): they are dead-lettered when held past the window',
    });
  }

  /**
   * The relay can publish. The polling relay: always up (`outboxBacklog()` watches it); relay mode
   * `external` too (Debezium publishes: watch its connector and slot, docs/guide/14-debezium.md). With
   * `relay.mode: 'logical'`: down when the slot is missing or invalidated, about to be invalidated
   * (`wal_status` `unreserved`), when it holds more than `maxLagBytes` of WAL (no instance reads it, or too slowly), when
   * this instance cannot read it (a fixed phrase says why), or when the instance reading it holds a commit
   * older than `maxLagSeconds` unconfirmed (the broker is down or refuses). Details: the slot, whether some
   * instance reads it, this instance's state, the lag in bytes and (reading instance) seconds.
   */
  async relay<Key extends string = 'relay'>(
    key: Key = 'relay' as Key,
    limits: RelayHealthLimits = {},
  ): Promise<MessagingHealthResult<Key>> {
    if (this.options.relay.mode !== 'logical') return result(key, 'up', { mode: this.options.relay.mode });
    // Tenants on: each tenant's relay reads a slot of its own, and `tenants()` says which cannot.
    if (this.options.tenants)
      return result(key, 'up', { mode: 'logical', slots: 'per tenant: see tenants()' });
    const { maxLagBytes = 1_073_741_824, maxLagSeconds = 60 } = limits;
    const status = this.logical.status();
    const details: Record<string, unknown> = { mode: 'logical', slot: status.slot, state: status.state };
    if (status.lagSeconds !== undefined) details.lagSeconds = status.lagSeconds;
    try {
      const slot = await this.logical.slotState();
      if (!slot) return result(key, 'down', { ...details, error: 'the replication slot does not exist' });
      Object.assign(details, { active: slot.active, walStatus: slot.walStatus, lagBytes: slot.lagBytes });
      if (slot.walStatus === 'lost') {
        return result(key, 'down', { ...details, error: 'the replication slot was invalidated' });
      }
      if (status.state === 'failing') return result(key, 'down', { ...details, error: status.problem });
      const degraded =
        slot.walStatus === 'unreserved' ||
        (slot.lagBytes ?? 0) > maxLagBytes ||
        (status.lagSeconds ?? 0) > maxLagSeconds;
      return degraded ? result(key, 'down', { ...details, degraded: true }) : result(key, 'up', details);
    } catch (error) {
      this.logger.warn(`Health: reading the replication slot failed: ${(error as Error).message}`);
      return result(key, 'down', { ...details, error: 'reading the replication slot failed' });
    }
  }
}

function result<Key extends string>(
  key: Key,
  status: 'up' | 'down',
  details: Record<string, unknown> = {},
): MessagingHealthResult<Key> {
  return { [key]: { ...details, status } } as MessagingHealthResult<Key>;
}
