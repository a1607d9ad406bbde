import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Clock } from '../common/clock';
import { ScheduledPurge } from '../common/scheduled-purge';
import { MESSAGING_CLOCK, MESSAGING_RESOLVED_OPTIONS } from '../messaging.constants';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { InboxStore } from './inbox-store';
import { InboxWriters } from './inbox-writers';

/**
 * Deletes inbox records older than `consumers.inboxRetentionMs`. A message redelivered after its record is
 * gone runs again, so keep records longer than anything can be redelivered (broker retention, DLQ redrives).
 */
@Injectable()
export class InboxRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly job: ScheduledPurge;

  constructor(
    store: InboxStore,
    private readonly registry: InboxWriters,
    @Inject(MESSAGING_CLOCK) clock: Clock,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
  ) {
    const retentionMs = options.consumers.inboxRetentionMs;
    this.job = new ScheduledPurge('inbox records', clock, new Logger(InboxRetention.name), (batch) =>
      store.purge(retentionMs, batch),
    );
  }

  onApplicationBootstrap(): void {
    if (this.registry.size > 0)
      this.job.start(this.options.retention.intervalMs, this.options.retention.batchSize);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.job.stop();
  }

  /** One retention round now; resolves with the records deleted. */
  purge(): Promise<number> {
    return this.job.run(this.options.retention.batchSize);
  }
}
