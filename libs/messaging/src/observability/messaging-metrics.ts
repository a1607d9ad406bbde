import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The library's Prometheus metrics, in a registry of the module's own (several applications in one process,
 * as in tests, never clash). Expose them with `registry.metrics()` (see `MetricsController` in the demo apps),
 * or merge the registry into yours with `Registry.merge`. Names follow Prometheus conventions: `_total` for
 * counters, base units (seconds), low-cardinality labels (destination, group, category; never message ids).
 */
@Injectable()
export class MessagingMetrics {
  readonly registry = new Registry();

  /** Messages the broker confirmed, per destination. */
  readonly published = new Counter({
    name: 'messaging_outbox_published_total',
    help: 'Outbox messages the broker confirmed.',
    labelNames: ['destination'],
    registers: [this.registry],
  });

  /** Publishes not confirmed (REJECTED or AMBIGUOUS), per destination and outcome. */
  readonly publishFailures = new Counter({
    name: 'messaging_outbox_publish_failures_total',
    help: 'Outbox messages the broker did not confirm (they stay pending and are retried).',
    labelNames: ['destination', 'outcome'],
    registers: [this.registry],
  });

  /** Time from a batch's publish to the broker's last confirmation. */
  readonly publishDuration = new Histogram({
    name: 'messaging_outbox_publish_duration_seconds',
    help: 'Time to publish one relay batch and get every confirmation.',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  /** Time from the outbox row's commit to the broker's confirmation. */
  readonly commitToPublish = new Histogram({
    name: 'messaging_outbox_commit_to_publish_seconds',
    help: 'Time from writing an outbox row to the broker confirming it.',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  /** Rows per claim. */
  readonly claimBatchSize = new Histogram({
    name: 'messaging_relay_claim_batch_size',
    help: 'Outbox rows claimed per relay round (rounds that found work).',
    buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000],
    registers: [this.registry],
  });

  /** Errors talking to the broker or the database. */
  readonly brokerErrors = new Counter({
    name: 'messaging_broker_errors_total',
    help: 'Failed broker operations (connect, publish, subscribe, commit).',
    labelNames: ['transport', 'operation'],
    registers: [this.registry],
  });

  /** Deliveries by how they ended: handled, or skipped as a duplicate by the inbox. */
  readonly consumed = new Counter({
    name: 'messaging_consumer_messages_total',
    help: 'Deliveries handled by @IdempotentHandler methods, by outcome (handled, duplicate, skipped: redriven for another group).',
    labelNames: ['group', 'destination', 'outcome'],
    registers: [this.registry],
  });

  /** Failed attempts, by failure category. */
  readonly failedAttempts = new Counter({
    name: 'messaging_consumer_failed_attempts_total',
    help: 'Failed delivery attempts, by failure category.',
    labelNames: ['group', 'destination', 'category'],
    registers: [this.registry],
  });

  /** Messages parked in a dead-letter destination. */
  readonly deadLettered = new Counter({
    name: 'messaging_dead_lettered_total',
    help: 'Messages moved to a dead-letter destination (after the copy was confirmed).',
    labelNames: ['group', 'destination', 'category'],
    registers: [this.registry],
  });

  /** Retries scheduled, by how. */
  readonly retried = new Counter({
    name: 'messaging_consumer_retries_total',
    help: 'Retries scheduled, by mode (inline, pause, retry destination).',
    labelNames: ['group', 'destination', 'mode'],
    registers: [this.registry],
  });

  /** Messages moved back from a DLQ by a redrive. */
  readonly redriven = new Counter({
    name: 'messaging_redriven_total',
    help: 'Messages a redrive republished (confirmed) from a dead-letter destination.',
    labelNames: ['source', 'target'],
    registers: [this.registry],
  });

  /** Time from the message's occurrence (the business commit) to the handler's start. */
  readonly endToEnd = new Histogram({
    name: 'messaging_consumer_lag_seconds',
    help: 'Time from the event occurring (outbox commit) to its handler starting.',
    labelNames: ['group', 'destination'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });

  /** Pending outbox rows and the oldest one's age, per destination (set on scrape). */
  readonly pending = new Gauge({
    name: 'messaging_outbox_pending',
    help: 'Outbox rows not yet confirmed by the broker.',
    labelNames: ['destination'],
    registers: [this.registry],
  });

  readonly oldestPendingAge = new Gauge({
    name: 'messaging_outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest unconfirmed outbox row.',
    labelNames: ['destination'],
    registers: [this.registry],
  });

  /** Estimated rows in the outbox and inbox tables (set on scrape, from PostgreSQL's statistics). */
  readonly tableRows = new Gauge({
    name: 'messaging_table_rows',
    help: 'Estimated rows in the library tables (pg_class.reltuples).',
    labelNames: ['table'],
    registers: [this.registry],
  });

  private readonly refreshers: Array<() => Promise<void>> = [];

  /** Registers work to do before each scrape (gauges read from the database). */
  onScrape(refresh: () => Promise<void>): void {
    this.refreshers.push(refresh);
  }

  /** The Prometheus text of every metric, gauges refreshed first (a failed refresh keeps the last values). */
  async metrics(): Promise<string> {
    await Promise.allSettled(this.refreshers.map((refresh) => refresh()));
    return this.registry.metrics();
  }

  /** The registry's content type, for the HTTP response. */
  get contentType(): string {
    return this.registry.contentType;
  }
}
