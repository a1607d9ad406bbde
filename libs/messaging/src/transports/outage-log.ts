import { Logger } from '@nestjs/common';
import { Clock } from '../common/clock';

/** How often a connection that keeps failing is summarised in the log. */
export const OUTAGE_SUMMARY_EVERY_MS = 30_000;

/**
 * What an operator needs to read about a broker that does not answer, instead of every failed attempt (a
 * Kafka client logs a dozen a second): one warning when failures start, a summary every
 * `OUTAGE_SUMMARY_EVERY_MS` while they go on (for how long, how many, the last error), and one line when it
 * works again.
 */
export class OutageLog {
  private down?: { since: number; failures: number; reportedAt: number };

  constructor(
    private readonly logger: Logger,
    /** What fails, for the log lines: "Kafka", "Consumer group billing". */
    private readonly subject: string,
    private readonly clock: Clock,
  ) {}

  /** One failed attempt (or a client's error line). */
  failure(error: string): void {
    const now = this.clock.now();
    if (!this.down) {
      this.down = { since: now, failures: 1, reportedAt: now };
      this.logger.warn(
        `${this.subject}: ${error} (further failures are summarised every ${seconds(OUTAGE_SUMMARY_EVERY_MS)} ` +
          'until it works again).',
      );
      return;
    }
    this.down.failures += 1;
    if (now - this.down.reportedAt < OUTAGE_SUMMARY_EVERY_MS) return;
    this.down.reportedAt = now;
    this.logger.warn(
      `${this.subject} still failing after ${seconds(now - this.down.since)}: ${this.down.failures} failures ` +
        `so far (last: ${error}).`,
    );
  }

  /** It works again (a publish confirmed, a consumer joined its group or subscribed). */
  recovered(): void {
    if (!this.down) return;
    const { since, failures } = this.down;
    this.down = undefined;
    this.logger.log(
      `${this.subject} works again after ${seconds(this.clock.now() - since)} (${failures} failures).`,
    );
  }
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}
