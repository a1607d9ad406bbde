import { Injectable } from '@nestjs/common';
import type * as PromClient from 'prom-client';
import type { Counter, CounterConfiguration, Gauge, GaugeConfiguration, Histogram } from 'prom-client';
import type { HistogramConfiguration, Registry } from 'prom-client';
import { requirePeer, tryRequirePeer } from '../common/optional-peer';

/**
 * The library's Prometheus metrics, in a registry of the module's own (several applications in one process,
 * as in tests, never clash). Expose them with `registry.metrics()` (see `MetricsController` in the demo apps),
 * or merge the registry into yours with `Registry.merge`. Names follow Prometheus conventions: `_total` for
 * counters, base units (seconds), low-cardinality labels (destination, group, category; never message ids).
 */
@Injectable()
export class MessagingMetrics {
  /** prom-client, an optional peer: without it every instrument is a no-op and nothing is exported. */
  private readonly prom = tryRequirePeer<typeof PromClient>('prom-client');
  private readonly ownRegistry = this.prom ? new this.prom.Registry() : undefined;

  /**
   * The registry holding the library's metrics (merge it into yours with prom-client's `Registry.merge`).
   * Needs `prom-client`: without it, reading this throws a `MissingPeerDependencyError`.
   */
  get registry(): Registry {
    return this.ownRegistry ?? requirePeer<never>('prom-client');
  }

  /** Messages the broker confirmed, per destination. */
  readonly published = this.counter({
    name: 'messaging_outbox_published_total',
    help: 'Outbox messages the broker confirmed.',
    labelNames: ['destination'],
  });

  /** Publishes not confirmed (REJECTED or AMBIGUOUS), per destination and outcome. */
  readonly publishFailures = this.counter({
    name: 'messaging_outbox_publish_failures_total',
    help: 'Outbox messages the broker did not confirm (they stay pending and are retried).',
    labelNames: ['destination', 'outcome'],
  });

  /** Time from a batch's publish to the broker's last confirmation. */
  readonly publishDuration = this.histogram({
    name: 'messaging_outbox_publish_duration_seconds',
    help: 'Time to publish one relay batch and get every confirmation.',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  });

  /** Time from the outbox row's commit to the broker's confirmation. */
  readonly commitToPublish = this.histogram({
    name: 'messaging_outbox_commit_to_publish_seconds',
    help: 'Time from writing an outbox row to the broker confirming it.',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  });

  /** Rows per claim. */
  readonly claimBatchSize = this.histogram({
    name: 'messaging_relay_claim_batch_size',
    help: 'Outbox rows claimed per relay round (rounds that found work).',
    buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000],
  });

  /** WAL the logical relay's slot holds past its confirmed position, bytes (`relay.mode: 'logical'`; on scrape). */
  readonly slotLagBytes = this.gauge({
    name: 'messaging_relay_slot_lag_bytes',
    help: "WAL written since the logical relay's slot last confirmed a position (what a dead relay pins).",
    labelNames: ['slot'],
  });

  /** Age of the oldest message the logical relay read and the broker has not confirmed yet, seconds. */
  readonly slotLagSeconds = this.gauge({
    name: 'messaging_relay_slot_lag_seconds',
    help: 'Time since the oldest commit the logical relay holds unconfirmed committed (the reading instance only).',
    labelNames: ['slot'],
  });

  /** Messages the logical relay read and the broker has not confirmed yet (the reading instance; on scrape). */
  readonly slotUnconfirmed = this.gauge({
    name: 'messaging_relay_unconfirmed_messages',
    help: 'Messages the logical relay read from its slot that the broker has not confirmed yet (the reading instance only).',
    labelNames: ['slot'],
  });

  /** Messages the logical relay parked in the outbox table (refused by the broker, or behind one that was). */
  readonly parked = this.counter({
    name: 'messaging_relay_parked_total',
    help: 'Messages the logical relay parked in the outbox table for the polling relay (refused, or queued behind a refused one).',
    labelNames: ['destination'],
  });

  /** Errors talking to the broker or the database. */
  readonly brokerErrors = this.counter({
    name: 'messaging_broker_errors_total',
    help: 'Failed broker operations (connect, publish, subscribe, commit).',
    labelNames: ['transport', 'operation'],
  });

  /** Deliveries by how they ended: handled, or skipped as a duplicate by the inbox. */
  readonly consumed = this.counter({
    name: 'messaging_consumer_messages_total',
    help: "Deliveries handled by @IdempotentHandler methods, by outcome (handled, duplicate, skipped: redriven for another group, unhandled: a type the group has no handler for, parked: kept in the service's database while its tenant's database does not answer).",
    labelNames: ['group', 'destination', 'outcome'],
  });

  /** Deliveries parked in the service's database while their tenant's database does not answer. */
  readonly parkedDeliveries = this.gauge({
    name: 'messaging_consumer_parked_messages',
    help: "Deliveries parked in the service's database (messaging_parked) because their tenant's database did not answer, per consumer group (at the last look, every second).",
    labelNames: ['group'],
  });

  /** Failed attempts, by failure category. */
  readonly failedAttempts = this.counter({
    name: 'messaging_consumer_failed_attempts_total',
    help: 'Failed delivery attempts, by failure category.',
    labelNames: ['group', 'destination', 'category'],
  });

  /** Messages parked in a dead-letter destination. */
  readonly deadLettered = this.counter({
    name: 'messaging_dead_lettered_total',
    help: 'Messages moved to a dead-letter destination (after the copy was confirmed).',
    labelNames: ['group', 'destination', 'category'],
  });

  /** Retries scheduled, by how. */
  readonly retried = this.counter({
    name: 'messaging_consumer_retries_total',
    help: 'Retries scheduled, by mode (inline, pause, retry destination).',
    labelNames: ['group', 'destination', 'mode'],
  });

  /**
   * Messages of a type the group has no handler for, settled unhandled (`consumers.unhandledTypes: 'settle'`),
   * per type: the first 50 types of a group and destination by name, later ones as `(other)`, a type that is
   * not a valid event type name as `(invalid)`, so that no producer can grow the label set.
   */
  readonly unhandled = this.counter({
    name: 'messaging_consumer_unhandled_total',
    help: 'Messages of a type the consumer group has no handler for, settled without handling, by type.',
    labelNames: ['group', 'destination', 'type'],
  });

  /** Looks at a held message that found it still unreadable, by why (`version`, `upcast`, `schema`). */
  readonly holds = this.counter({
    name: 'messaging_consumer_holds_total',
    help: 'Times a message the consumer cannot read yet (event version, upcaster, schema) was held again.',
    labelNames: ['group', 'destination', 'reason'],
  });

  /** Messages this instance holds now, by why (set on scrape). */
  readonly held = this.gauge({
    name: 'messaging_consumer_held_messages',
    help: 'Messages this instance holds because it cannot read them yet (a rolling deploy?), by reason.',
    labelNames: ['group', 'destination', 'reason'],
  });

  /** Age of the oldest message this instance holds, seconds (0 when none; set on scrape). */
  readonly oldestHeldAge = this.gauge({
    name: 'messaging_consumer_oldest_held_age_seconds',
    help: 'How long this instance has held its oldest held message (dead-lettered at consumers.versionHold.windowMs).',
  });

  /** Messages moved back from a DLQ by a redrive. */
  readonly redriven = this.counter({
    name: 'messaging_redriven_total',
    help: 'Messages a redrive republished (confirmed) from a dead-letter destination.',
    labelNames: ['source', 'target'],
  });

  /** Time from the message's occurrence (the business commit) to the handler's start. */
  readonly endToEnd = this.histogram({
    name: 'messaging_consumer_lag_seconds',
    help: 'Time from the event occurring (outbox commit) to its handler starting.',
    labelNames: ['group', 'destination'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  });

  /** Pending outbox rows and the oldest one's age, per destination (set on scrape). */
  readonly pending = this.gauge({
    name: 'messaging_outbox_pending',
    help: 'Outbox rows not yet confirmed by the broker.',
    labelNames: ['destination'],
  });

  /** Age of the oldest pending outbox row, seconds, per destination (set on scrape). */
  readonly oldestPendingAge = this.gauge({
    name: 'messaging_outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest unconfirmed outbox row.',
    labelNames: ['destination'],
  });

  /** Scheduled messages not yet due (set on scrape). */
  readonly scheduled = this.gauge({
    name: 'messaging_outbox_scheduled',
    help: 'Scheduled outbox messages waiting to be due.',
  });

  /** Seconds until the next scheduled message is due (set on scrape; absent when none waits). */
  readonly nextScheduledDue = this.gauge({
    name: 'messaging_outbox_next_scheduled_due_seconds',
    help: 'Seconds until the next scheduled outbox message is due (negative: overdue, not yet moved).',
  });

  /** Estimated rows in the outbox and inbox tables (set on scrape, from PostgreSQL's statistics). */
  readonly tableRows = this.gauge({
    name: 'messaging_table_rows',
    help: 'Estimated rows in the library tables (pg_class.reltuples).',
    labelNames: ['table'],
  });

  /** Pending outbox rows per tenant (tenants on; set on scrape; label bounded by `tenants.maxLabelledTenants`). */
  readonly tenantPending = this.gauge({
    name: 'messaging_tenant_outbox_pending',
    help: "Unconfirmed outbox rows in each tenant's database (beyond tenants.maxLabelledTenants: _other).",
    labelNames: ['tenant'],
  });

  /** 1 when the tenant's database answered the scrape's query, else 0 (tenants on). */
  readonly tenantReachable = this.gauge({
    name: 'messaging_tenant_database_up',
    help: "1 when the tenant's database answered the last scrape, 0 when it did not.",
    labelNames: ['tenant'],
  });

  /** Messages the broker confirmed, per tenant (tenants on). */
  readonly tenantPublished = this.counter({
    name: 'messaging_tenant_published_total',
    help: "Outbox messages from each tenant's database the broker confirmed.",
    labelNames: ['tenant'],
  });

  /**
   * Deliveries a consumer refused to apply for their tenant (tenants on): `unknown` (held: not registered),
   * `forged` (signature wrong: dead-lettered), `missing` (no tenant: dead-lettered). No tenant label: a
   * forged header's value never becomes a series.
   */
  readonly tenantRefused = this.counter({
    name: 'messaging_tenant_refused_total',
    help: 'Deliveries not applied because of their tenant: unknown (held), forged or missing (dead-lettered).',
    labelNames: ['group', 'reason'],
  });

  private readonly refreshers: Array<() => Promise<void>> = [];

  /** Registers work to do before each scrape (gauges read from the database). */
  onScrape(refresh: () => Promise<void>): void {
    this.refreshers.push(refresh);
  }

  /** The Prometheus text of every metric, gauges refreshed first (a failed refresh keeps the last values). */
  async metrics(): Promise<string> {
    const registry = this.registry;
    await Promise.allSettled(this.refreshers.map((refresh) => refresh()));
    return registry.metrics();
  }

  /** The registry's content type, for the HTTP response. */
  get contentType(): string {
    return this.registry.contentType;
  }

  private counter<T extends string>(config: CounterConfiguration<T>): Counter<T> {
    return this.prom && this.ownRegistry
      ? new this.prom.Counter({ ...config, registers: [this.ownRegistry] })
      : (NO_OP as unknown as Counter<T>);
  }

  private gauge<T extends string>(config: GaugeConfiguration<T>): Gauge<T> {
    return this.prom && this.ownRegistry
      ? new this.prom.Gauge({ ...config, registers: [this.ownRegistry] })
      : (NO_OP as unknown as Gauge<T>);
  }

  private histogram<T extends string>(config: HistogramConfiguration<T>): Histogram<T> {
    return this.prom && this.ownRegistry
      ? new this.prom.Histogram({ ...config, registers: [this.ownRegistry] })
      : (NO_OP as unknown as Histogram<T>);
  }
}

/** Stands in for every instrument when prom-client is not installed: the calls the library makes do nothing. */
const NO_OP = Object.freeze({
  inc: () => undefined,
  set: () => undefined,
  observe: () => undefined,
  reset: () => undefined,
  remove: () => undefined,
  startTimer: () => () => 0,
});
