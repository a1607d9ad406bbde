import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MESSAGING_DATA_SOURCE } from '../messaging.constants';
import { OutboxStore } from '../outbox/outbox-store';
import { MessagingMetrics } from './messaging-metrics';

/** Fills the gauges read from PostgreSQL when metrics are scraped: backlog per destination, table sizes. */
@Injectable()
export class MetricsCollector implements OnModuleInit {
  constructor(
    private readonly metrics: MessagingMetrics,
    private readonly store: OutboxStore,
    @Inject(MESSAGING_DATA_SOURCE) private readonly dataSource: DataSource,
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
    const { outbox, inbox } = this.store.tables;
    const rows = await this.dataSource.query<Array<{ name: string; estimate: number }>>(
      `select c.relname as name, greatest(c.reltuples, 0)::float8 as estimate from pg_class c
       where c.oid in (to_regclass($1), to_regclass($2))`,
      [outbox, inbox],
    );
    for (const row of rows) this.metrics.tableRows.set({ table: row.name }, Number(row.estimate));
  }
}
