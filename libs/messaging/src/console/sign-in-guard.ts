/** How hard the console makes guessing passwords. Every field has a default. */
export interface SignInLimits {
  /** Failed sign-ins of one account (within `forgetAfterMs`) before it must wait. Default 5. */
  readonly accountFailures?: number;
  /** Failed sign-ins from one address (within `forgetAfterMs`) before it must wait. Default 20. */
  readonly addressFailures?: number;
  /** The first wait once a limit is reached, ms; each further failure doubles it. Default 30 s. */
  readonly baseDelayMs?: number;
  /** The longest wait, ms. Default 15 minutes. */
  readonly maxDelayMs?: number;
  /** A counter is forgotten after this long without a failure once its wait is over, ms. Default 15 minutes. */
  readonly forgetAfterMs?: number;
  /** Sign-ins checked at once (each runs the authenticator: a scrypt hash, tens of MiB). Default 2. */
  readonly maxConcurrent?: number;
  /** Sign-ins waiting for a turn; one more is refused at once (503). Default 20. */
  readonly maxWaiting?: number;
}

/** The limits with their defaults filled in. */
export type ResolvedSignInLimits = Required<SignInLimits>;

/** `SignInLimits`' defaults. */
export const DEFAULT_SIGN_IN_LIMITS: ResolvedSignInLimits = {
  accountFailures: 5,
  addressFailures: 20,
  baseDelayMs: 30_000,
  maxDelayMs: 15 * 60_000,
  forgetAfterMs: 15 * 60_000,
  maxConcurrent: 2,
  maxWaiting: 20,
};

/** At most this many accounts and addresses are tracked each; the stalest goes first. */
const MAX_TRACKED = 10_000;

interface Failures {
  count: number;
  last: number;
  /** No attempt before this time (ms). */
  until: number;
}

/** Whether a sign-in may be checked now. */
export type SignInVerdict =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly retryAfterMs: number; readonly by: 'account' | 'address' };

/**
 * Per-account and per-address backoff for sign-ins: after `accountFailures` failures of an account (or
 * `addressFailures` from an address), each attempt must wait, 30 s, then twice as long after each further
 * failure, up to 15 minutes; a success clears the account (never the address: one good account must not
 * unlock guessing others). While an account waits, even its right password is not checked. Pure logic on an
 * injected clock; bounded memory.
 */
export class SignInGuard {
  private readonly accounts = new Map<string, Failures>();
  private readonly addresses = new Map<string, Failures>();
  readonly limits: ResolvedSignInLimits;

  constructor(
    limits: SignInLimits,
    private readonly now: () => number,
  ) {
    this.limits = { ...DEFAULT_SIGN_IN_LIMITS, ...limits };
  }

  /** Whether `account` may try to sign in from `address` now. */
  check(account: string, address: string): SignInVerdict {
    const now = this.now();
    for (const [by, failures] of [
      ['account', this.current(this.accounts, accountKey(account), now)],
      ['address', this.current(this.addresses, address, now)],
    ] as const) {
      if (failures && failures.until > now) return { allowed: false, retryAfterMs: failures.until - now, by };
    }
    return { allowed: true };
  }

  /** Counts a failed sign-in; true when the account has just reached its limit (worth an audit entry). */
  failed(account: string, address: string): boolean {
    const now = this.now();
    const reached = this.count(this.accounts, accountKey(account), this.limits.accountFailures, now);
    this.count(this.addresses, address, this.limits.addressFailures, now);
    return reached;
  }

  /** A successful sign-in clears the account's failures. */
  succeeded(account: string): void {
    this.accounts.delete(accountKey(account));
  }

  private count(map: Map<string, Failures>, key: string, limit: number, now: number): boolean {
    const failures = this.current(map, key, now) ?? { count: 0, last: now, until: 0 };
    failures.count += 1;
    failures.last = now;
    const over = failures.count - limit; // 0: the failure that reached the limit
    if (over >= 0) {
      const delay = this.limits.baseDelayMs * 2 ** Math.min(over, 30);
      failures.until = now + Math.min(this.limits.maxDelayMs, delay);
    }
    map.delete(key); // re-inserted last: the map's order is staleness order
    map.set(key, failures);
    if (map.size > MAX_TRACKED) map.delete(map.keys().next().value as string);
    return over === 0;
  }

  private current(map: Map<string, Failures>, key: string, now: number): Failures | undefined {
    const failures = map.get(key);
    // Forgotten only after a quiet `forgetAfterMs` once its wait is over: a wait never restarts the count.
    if (failures && now - Math.max(failures.last, failures.until) >= this.limits.forgetAfterMs) {
      map.delete(key);
      return undefined;
    }
    return failures;
  }
}

/** `Alice` and `alice` are one account to the guard (an authenticator may compare either way). */
function accountKey(account: string): string {
  return account.normalize('NFKC').toLowerCase();
}

/**
 * At most `limit` tasks at once, `maxWaiting` more in line; `run` refuses at once (resolves `undefined`)
 * when the line is full.
 */
export class BoundedConcurrency {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly limit: number,
    private readonly maxWaiting: number,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<{ value: T } | undefined> {
    if (this.active >= this.limit) {
      if (this.waiting.length >= this.maxWaiting) return undefined;
      await new Promise<void>((turn) => this.waiting.push(turn));
    } else {
      this.active += 1;
    }
    try {
      return { value: await task() };
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    }
  }
}
