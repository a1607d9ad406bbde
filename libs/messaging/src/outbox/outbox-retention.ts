import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Clock } from '../common/clock';
import { ScheduledPurge } from '../common/scheduled-purge';
import { MESSAGING_CLOCK, MESSAGING_RESOLVED_OPTIONS } from '../messaging.constants';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { OutboxStore } from './outbox-store';

/**
 * Deletes sent outbox rows after `retention.sentRetentionMs`, in small batches, one instance at a time (the
 * store takes an advisory lock), in the processes that run the relay.
 */
@Injectable()
export class OutboxRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly job: ScheduledPurge;

  constructor(
    store: OutboxStore,
    @Inject(MESSAGING_CLOCK) clock: Clock,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
  ) {
    const retentionMs = options.retention.sentRetentionMs;
    this.job = new ScheduledPurge('sent outbox rows', clock, new Logger(OutboxRetention.name), (batch) =>
      store.purgeSent(retentionMs, batch),
    );
  }

  onApplicationBootstrap(): void {
    if (this.options.relay.enabled)
      this.job.start(this.options.retention.intervalMs, this.options.retention.batchSize);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.job.stop();
  }

  /** One retention round now; resolves with the rows deleted. */
  purge(): Promise<number> {
    return this.job.run(this.options.retention.batchSize);
  }
}
