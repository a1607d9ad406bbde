import { Injectable, OnModuleInit } from '@nestjs/common';
import { OutboxStore } from '../outbox/outbox-store';
import { MessagingMetrics } from './messaging-metrics';

/** Fills the gauges read from the database when metrics are scraped: backlog per destination, table sizes. */
@Injectable()
export class MetricsCollector implements OnModuleInit {
  constructor(
    private readonly metrics: MessagingMetrics,
    private readonly store: OutboxStore,
  ) {}

  onModuleInit(): void {
    this.metrics.onScrape(() => this.refreshBacklog());
    this.metrics.onScrape(() => this.refreshTableRows());
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

  private async refreshTableRows(): Promise<void> {
    for (const { table, rows } of await this.store.tableRowEstimates()) {
      this.metrics.tableRows.set({ table }, rows);
    }
  }
}
