import { metricValue } from '../../../tools/demo/prometheus';
import { httpRequest } from '../../../tools/demo/http-request';
import { ServiceProcess } from '../../../tools/demo/service-process';

/**
 * Duplicates the inbox suppressed, from subscribe-service's `/metrics`
 * (`messaging_consumer_messages_total{outcome="duplicate"}`), summed over the process's lifetimes: the
 * counter starts at 0 with every restart, so each lifetime's last scrape is kept. Scraped every second, so
 * the sum is a lower bound (a SIGKILL loses what was counted since the last scrape).
 */
export class DuplicateMeter {
  private readonly lastByPid = new Map<number, number>();
  private timer?: NodeJS.Timeout;
  private scraping?: Promise<void>;

  constructor(private readonly service: ServiceProcess) {}

  start(everyMs = 1_000): void {
    this.timer = setInterval(() => {
      this.scraping ??= this.scrape().finally(() => (this.scraping = undefined));
    }, everyMs);
  }

  /** Takes a last scrape and stops. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.scraping;
    await this.scrape();
  }

  /** The sum over lifetimes so far. */
  get total(): number {
    return [...this.lastByPid.values()].reduce((sum, n) => sum + n, 0);
  }

  /** How many lifetimes (processes) were scraped. */
  get lifetimes(): number {
    return this.lastByPid.size;
  }

  private async scrape(): Promise<void> {
    const pid = this.service.pid;
    if (pid === undefined) return;
    try {
      const answer = await httpRequest('GET', `${this.service.url}/metrics`, undefined, 2_000);
      if (answer.status !== 200 || this.service.pid !== pid) return;
      const value = metricValue(answer.text, 'messaging_consumer_messages_total', { outcome: 'duplicate' });
      this.lastByPid.set(pid, Math.max(value, this.lastByPid.get(pid) ?? 0));
    } catch {
      // Down (killed, restarting, frozen): the next scrape counts.
    }
  }
}
