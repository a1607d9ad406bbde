import { Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { DeliveryControl } from '../transports/delivery-contract';
import { errorLine } from './delivery-description';
import { waitKeepingAlive } from './keep-alive-wait';

/** The first wait before a transaction that could not begin is tried again; it doubles up to the longest. */
const FIRST_WAIT_MS = 250;
const LONGEST_WAIT_MS = 5_000;
/** While the database stays away, a line every this often (not one per try). */
const REPORT_EVERY_MS = 30_000;

/**
 * The consumer's wait for its database. A try whose transaction cannot begin (no connection, the server
 * restarting) never reached its handler: it is not the message's failure and spends none of its attempts.
 * The delivery is held (kept alive) and tried again after 250 ms, doubling up to 5 s (jittered to 50–100%
 * of that), until the database answers or the consumer stops. The outage is logged when it starts, every
 * 30 s while it lasts, and when it ends: a few lines for the operator, however many deliveries wait.
 */
export class DatabaseWait {
  /** Per database that does not answer (a tenant's, with tenants on; '' otherwise): since when, last line. */
  private readonly away = new Map<string, { readonly since: number; reportedAt: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /**
   * Waits before the next try of a transaction that could not begin (`waits`: how many waits this delivery
   * had already); false when the consumer stops first. `tenant`: whose database it is, with tenants on (each
   * tenant's outage is its own: logged on its own, ended by its own database's answer).
   */
  async after(error: unknown, waits: number, control: DeliveryControl, tenant?: string): Promise<boolean> {
    const now = this.clock.now();
    const away = this.away.get(tenant ?? '');
    if (away === undefined) {
      this.away.set(tenant ?? '', { since: now, reportedAt: now });
      this.logger.warn(
        `${databaseOf(tenant)} does not answer (${errorLine(error)}): deliveries wait for it, and a ` +
          'transaction that cannot begin spends none of their attempts.',
      );
    } else if (now - away.reportedAt >= REPORT_EVERY_MS) {
      away.reportedAt = now;
      this.logger.warn(
        `${databaseOf(tenant)} still does not answer after ${seconds(now - away.since)} ` +
          `(${errorLine(error)}).`,
      );
    }
    const ceiling = Math.min(LONGEST_WAIT_MS, FIRST_WAIT_MS * 2 ** Math.min(waits, 5));
    return waitKeepingAlive(this.clock, Math.round(ceiling * (0.5 + 0.5 * this.clock.random())), control);
  }

  /** How long the database (`tenant`'s) has not answered, in ms; 0 while it answers. */
  awayFor(tenant?: string): number {
    const away = this.away.get(tenant ?? '');
    return away === undefined ? 0 : this.clock.now() - away.since;
  }

  /** A transaction began: the database (`tenant`'s) answers (again, after an outage: logged). */
  answered(tenant?: string): void {
    const away = this.away.get(tenant ?? '');
    if (away === undefined) return;
    this.away.delete(tenant ?? '');
    this.logger.log(`${databaseOf(tenant)} answers again, after ${seconds(this.clock.now() - away.since)}.`);
  }
}

function databaseOf(tenant: string | undefined): string {
  return tenant === undefined ? "The consumer's database" : `Tenant ${tenant}'s database`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
