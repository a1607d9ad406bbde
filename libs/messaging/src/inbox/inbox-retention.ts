import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { randomBytes } from 'node:crypto';
import { HandlerRegistry } from '../consumers/handler-registry';
import { MESSAGING_RESOLVED_OPTIONS } from '../messaging.constants';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { InboxStore } from './inbox-store';

/**
 * Deletes inbox records older than `consumers.inboxRetentionMs`. A message redelivered after its record is
 * gone runs again, so keep records longer than anything can be redelivered (broker retention, DLQ redrives).
 */
@Injectable()
export class InboxRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(InboxRetention.name);
  private readonly timer = `messaging-inbox-retention-${randomBytes(4).toString('hex')}`;
  private running?: Promise<number>;

  constructor(
    private readonly store: InboxStore,
    private readonly registry: HandlerRegistry,
    private readonly scheduler: SchedulerRegistry,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
  ) {}

  onApplicationBootstrap(): void {
    if (this.registry.size === 0) return;
    this.scheduler.addInterval(
      this.timer,
      setInterval(() => void this.purge(), this.options.retention.intervalMs),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.scheduler.doesExist('interval', this.timer)) this.scheduler.deleteInterval(this.timer);
    await this.running;
  }

  /** Deletes expired records in batches (at most 100 batches a round). */
  purge(): Promise<number> {
    this.running ??= this.purgeBatches().finally(() => (this.running = undefined));
    return this.running;
  }

  private async purgeBatches(): Promise<number> {
    const { batchSize } = this.options.retention;
    let total = 0;
    try {
      for (let i = 0; i < 100; i++) {
        const deleted = await this.store.purge(this.options.consumers.inboxRetentionMs, batchSize);
        total += deleted;
        if (deleted < batchSize) break;
      }
    } catch (error) {
      this.logger.warn(`Inbox retention failed (will try again): ${(error as Error).message}`);
    }
    return total;
  }
}
