import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { MESSAGING_RESOLVED_OPTIONS } from '../messaging.constants';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { MessagingMetrics } from './messaging-metrics';
import { OutboxFigures, RelaySlotFigures } from './observed-sources';

/**
 * Fills the gauges read from the database when metrics are scraped: backlog per destination, table sizes, and
 * with `relay.mode: 'logical'` the slot's lag.
 */
@Injectable()
export class MetricsCollector implements OnModuleInit {
  constructor(
    private readonly metrics: MessagingMetrics,
    private readonly store: OutboxFigures,
    private readonly logical: RelaySlotFigures,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
  ) {}

  onModuleInit(): void {
    this.metrics.onScrape(() => this.refreshBacklog());
    this.metrics.onScrape(() => this.refreshTableRows());
    this.metrics.onScrape(() => this.refreshScheduled());
    // With tenants on, each tenant's slot shows in the tenants' figures (a slot label per tenant would be unbounded).
    if (this.options.relay.mode === 'logical' && !this.options.tenants) {
      this.metrics.onScrape(() => this.refreshSlotLag());
    }
  }

  /** Bytes from any instance (the slot is the database's); seconds from the instance that reads it. */
  private async refreshSlotLag(): Promise<void> {
    const { slot, lagSeconds, unconfirmed } = this.logical.status();
    const state = await this.logical.slotState();
    this.metrics.slotLagBytes.reset();
    this.metrics.slotLagSeconds.reset();
    this.metrics.slotUnconfirmed.reset();
    if (state?.lagBytes !== undefined) this.metrics.slotLagBytes.set({ slot }, state.lagBytes);
    if (lagSeconds !== undefined) this.metrics.slotLagSeconds.set({ slot }, lagSeconds);
    if (unconfirmed !== undefined) this.metrics.slotUnconfirmed.set({ slot }, unconfirmed);
  }

  private async refreshBacklog(): Promise<void> {
    const backlog = await this.store.backlog();
    this.metrics.pending.reset();
    this.metrics.oldestPendingAge.reset();
    for (const { destination, pending, oldestAgeMs } of backlog) {
      this.metrics.pending.set({ destination }, pending);
      this.metrics.oldestPendingAge.set({ destination }, oldestAgeMs / 1000);
    }
  }

  private async refreshScheduled(): Promise<void> {
    const { scheduled, nextDueInMs } = await this.store.scheduledFigures();
    this.metrics.scheduled.set(scheduled);
    // Absent when none waits: reset() would leave an unlabelled gauge at 0, which reads as "due now".
    if (nextDueInMs === undefined) this.metrics.nextScheduledDue.remove();
    else this.metrics.nextScheduledDue.set(nextDueInMs / 1000);
  }

  private async refreshTableRows(): Promise<void> {
    for (const { table, rows } of await this.store.tableRowEstimates()) {
      this.metrics.tableRows.set({ table }, rows);
    }
  }
}
