import { Logger } from '@nestjs/common';
import { CancelTimer, Clock } from './clock';

/** At most this many batches a round, so that one round never holds on for long. */
const MAX_BATCHES_PER_ROUND = 100;

/**
 * A retention job: on an interval of the library's `Clock` (so a test advances it), deletes in batches until
 * fewer than a batch is left; one round at a time; a failure is logged and the next round tries again.
 */
export class ScheduledPurge {
  private cancel?: CancelTimer;
  private running?: Promise<number>;

  constructor(
    private readonly what: string,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly deleteBatch: (batchSize: number) => Promise<number>,
  ) {}

  /** Runs a round every `intervalMs`, the first one `intervalMs` from now. */
  start(intervalMs: number, batchSize: number): void {
    this.cancel?.();
    this.cancel = this.clock.setInterval(() => void this.run(batchSize), intervalMs);
  }

  /** Stops the interval and waits for a round that is running. */
  async stop(): Promise<void> {
    this.cancel?.();
    this.cancel = undefined;
    await this.running;
  }

  /** One round; resolves with the rows deleted (a round already running is joined). */
  run(batchSize: number): Promise<number> {
    this.running ??= this.deleteBatches(batchSize).finally(() => (this.running = undefined));
    return this.running;
  }

  private async deleteBatches(batchSize: number): Promise<number> {
    let total = 0;
    try {
      for (let i = 0; i < MAX_BATCHES_PER_ROUND; i++) {
        const deleted = await this.deleteBatch(batchSize);
        total += deleted;
        if (deleted < batchSize) break;
      }
    } catch (error) {
      this.logger.warn(`Deleting expired ${this.what} failed (will try again): ${(error as Error).message}`);
    }
    if (total > 0) this.logger.log(`Deleted ${total} expired ${this.what}.`);
    return total;
  }
}
