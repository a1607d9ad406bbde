import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { randomBytes } from 'node:crypto';
import { MESSAGING_RESOLVED_OPTIONS } from '../messaging.constants';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { OutboxStore } from './outbox-store';

/** Deletes sent outbox rows after `retention.sentRetentionMs`, in small batches, one instance at a time. */
@Injectable()
export class OutboxRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OutboxRetention.name);
  private readonly timer = `messaging-outbox-retention-${randomBytes(4).toString('hex')}`;
  private running?: Promise<number>;

  constructor(
    private readonly store: OutboxStore,
    private readonly scheduler: SchedulerRegistry,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.options.relay.enabled) return;
    this.scheduler.addInterval(
      this.timer,
      setInterval(() => void this.purge(), this.options.retention.intervalMs),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.scheduler.doesExist('interval', this.timer)) this.scheduler.deleteInterval(this.timer);
    await this.running;
  }

  /** One retention round: deletes batches until fewer than a batch is left (at most 100 batches). */
  purge(): Promise<number> {
    this.running ??= this.purgeBatches().finally(() => (this.running = undefined));
    return this.running;
  }

  private async purgeBatches(): Promise<number> {
    const { sentRetentionMs, batchSize } = this.options.retention;
    let total = 0;
    try {
      for (let i = 0; i < 100; i++) {
        const deleted = await this.store.purgeSent(sentRetentionMs, batchSize);
        total += deleted;
        if (deleted < batchSize) break;
      }
    } catch (error) {
      this.logger.warn(`Outbox retention failed (will try again): ${(error as Error).message}`);
    }
    if (total > 0) this.logger.log(`Deleted ${total} sent outbox rows older than ${sentRetentionMs} ms.`);
    return total;
  }
}
