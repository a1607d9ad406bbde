import { CancelTimer, Clock } from './clock';

/**
 * Turns at the tenants' outbox claims, handed out first come, first served, `concurrent` at a time: a tenant
 * relay that claimed asks again at the back of the line, so a tenant with a backlog of a million rows claims
 * one batch, then every waiting tenant claims one, then it claims its next (round-robin claims, a batch each).
 * A turn is given back when its claim ends, or after `holdAtMostMs` (a database that does not answer keeps no
 * turn from the others).
 */
export class FairTurns {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly concurrent: number,
    private readonly clock: Clock,
    private readonly holdAtMostMs: number,
  ) {}

  /** Waits for a turn; resolves with the function that gives it back (once; later calls do nothing). */
  async acquire(): Promise<() => void> {
    if (this.active < this.concurrent) this.active += 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let given = false;
    let cancel: CancelTimer | undefined = undefined;
    const release = (): void => {
      if (given) return;
      given = true;
      cancel?.();
      const next = this.waiting.shift();
      if (next)
        next(); // the turn passes on: `active` stays
      else this.active -= 1;
    };
    cancel = this.clock.setTimeout(release, this.holdAtMostMs);
    return release;
  }

  /** Turns taken now, and claims waiting for one (tests, metrics). */
  get load(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.length };
  }
}
