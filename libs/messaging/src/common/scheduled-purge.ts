import { Logger } from '@nestjs/common';
import { TimerRegistry } from './timer-registry';
import { randomBytes } from 'node:crypto';

/** At most this many batches a round, so that one round never holds on for long. */
const MAX_BATCHES_PER_ROUND = 100;

/**
 * A retention job: on an interval (registered with the library's `TimerRegistry`), deletes in batches until fewer than
 * a batch is left; one round at a time; a failure is logged and the next round tries again.
 */
export class ScheduledPurge {
  private readonly timer: string;
  private running?: Promise<number>;

  constructor(
    private readonly what: string,
    private readonly scheduler: TimerRegistry,
    private readonly logger: Logger,
    private readonly deleteBatch: (batchSize: number) => Promise<number>,
  ) {
    this.timer = `messaging-${what.replace(/\W+/g, '-')}-retention-${randomBytes(4).toString('hex')}`;
  }

  start(intervalMs: number, batchSize: number): void {
    this.scheduler.addInterval(
      this.timer,
      setInterval(() => void this.run(batchSize), intervalMs),
    );
  }

  async stop(): Promise<void> {
    if (this.scheduler.doesExist('interval', this.timer)) this.scheduler.deleteInterval(this.timer);
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
