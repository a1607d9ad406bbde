/**
 * Refusals of requests without a session (no session, a sign-in form without its token, wrong passwords,
 * sign-ins that must wait), counted rather than written one by one: a flood of them would otherwise push
 * every plan, approval and execution off the audit page. `take()` hands over the counts once
 * `intervalMs` has passed since the last hand-over (or at once with `force`), for one audit entry.
 */
export class AnonymousRefusals {
  private readonly counts = new Map<string, number>();
  private since: number;

  constructor(
    private readonly intervalMs: number,
    private readonly now: () => number,
  ) {
    this.since = now();
  }

  /** Counts one refusal of `outcome`. */
  count(outcome: string): void {
    this.counts.set(outcome, (this.counts.get(outcome) ?? 0) + 1);
  }

  /** The counts and since when, when there are any and it is time (or `force`); they start again at zero. */
  take(force = false): { total: number; detail: string } | undefined {
    const now = this.now();
    if (this.counts.size === 0 || (!force && now - this.since < this.intervalMs)) return undefined;
    const parts = [...this.counts].map(([outcome, n]) => `${outcome} ${n}`);
    const total = [...this.counts.values()].reduce((sum, n) => sum + n, 0);
    const detail = `${total} refusal(s) without a session since ${new Date(this.since).toISOString()}: ${parts.join(', ')}`;
    this.counts.clear();
    this.since = now;
    return { total, detail };
  }
}
