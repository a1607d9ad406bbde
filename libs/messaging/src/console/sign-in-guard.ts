import { isIPv6 } from 'node:net';

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
  /**
   * Sign-ins of one address (an IPv6 /64 is one), and of one account name, being checked or waiting at once;
   * one more is refused at once (429), so that a flood from one address or of one name cannot fill the line
   * others wait in. Default 4.
   */
  readonly maxInFlightEach?: number;
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
  maxInFlightEach: 4,
};

/**
 * At most this many accounts and addresses are tracked each: the stalest that is neither waiting nor being
 * checked goes first, and when there is none a new one is refused. Names no user has (see `failed`) are kept
 * apart, as many again, and the stalest of them goes first even while it waits.
 */
const MAX_TRACKED = 10_000;

interface Failures {
  count: number;
  last: number;
  /** No attempt before this time (ms). */
  until: number;
  /** Attempts reserved (`reserve`) whose password is being checked. */
  pending: number;
}

/** How long a sign-in refused because others of its account or address are being checked is told to wait. */
const IN_FLIGHT_RETRY_MS = 1_000;

/**
 * Whether a sign-in may be checked now; `inFlight`: refused because others of its account or address are
 * being checked or waiting, not because of failures.
 */
export type SignInVerdict =
  | { readonly allowed: true }
  | {
      readonly allowed: false;
      readonly retryAfterMs: number;
      readonly by: 'account' | 'address';
      readonly inFlight?: true;
    };

/**
 * Per-account and per-address backoff for sign-ins: after `accountFailures` failures of an account (or
 * `addressFailures` from an address), each attempt must wait, 30 s, then twice as long after each further
 * failure, up to 15 minutes; a success clears the account (never the address: one good account must not
 * unlock guessing others). While an account waits, even its right password is not checked. A name no user has
 * is limited the same way (a guesser cannot tell it from a real one), but in a table of its own: filling that
 * table can neither crowd out nor lift a real account's lockout (issue 45, finding 10). Pure logic on an
 * injected clock; bounded memory.
 */
export class SignInGuard {
  private readonly accounts = new Map<string, Failures>();
  /** Failures of names the authenticator says no user has: evictable, never in `accounts`' way. */
  private readonly unknownAccounts = new Map<string, Failures>();
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
      ['account', this.current(this.unknownAccounts, accountKey(account), now)],
      ['address', this.current(this.addresses, addressKey(address), now)],
    ] as const) {
      if (failures && failures.until > now) return { allowed: false, retryAfterMs: failures.until - now, by };
    }
    return { allowed: true };
  }

  /**
   * Checks and, when allowed, reserves an attempt of `account` from `address` before its password is
   * checked: a burst of sign-ins sent together gets no more passwords checked than the limits leave (issue 45,
   * item 4: the check came before the password and the count after it). While an account (or address) is
   * under its limit, at most the failures it has left are checked at once; once past it and its wait is over,
   * one at a time; and never more than `maxInFlightEach` at once (issue 45, finding 9: one address could hold
   * 20 of the line's 22 places). Each reserved attempt ends with `failed`, `succeeded` or `released`.
   */
  reserve(account: string, address: string): SignInVerdict {
    const verdict = this.check(account, address);
    if (!verdict.allowed) return verdict;
    const now = this.now();
    const counters = [
      ['account', this.accountsOf(account), accountKey(account), this.limits.accountFailures],
      ['address', this.addresses, addressKey(address), this.limits.addressFailures],
    ] as const;
    for (const [by, map, key, limit] of counters) {
      const failures = this.current(map, key, now);
      const count = failures?.count ?? 0;
      const room = Math.min(count < limit ? limit - count : 1, this.limits.maxInFlightEach);
      if ((failures?.pending ?? 0) >= room) {
        return { allowed: false, retryAfterMs: IN_FLIGHT_RETRY_MS, by, inFlight: true };
      }
      if (!failures && map.size >= MAX_TRACKED && !this.makeRoom(map, now)) {
        // Every tracked entry is waiting or being checked: a new one would push out a lockout.
        return { allowed: false, retryAfterMs: this.limits.baseDelayMs, by };
      }
    }
    for (const [, map, key] of counters) {
      const failures = this.current(map, key, now) ?? { count: 0, last: now, until: 0, pending: 0 };
      failures.pending += 1;
      map.set(key, failures);
    }
    return { allowed: true };
  }

  /**
   * Counts a failed sign-in; true when the account has just reached its limit (worth an audit entry).
   * `known: false` (the authenticator says no user has this name) counts it with the same limit in the table
   * of unknown names, whose stalest entry goes first when it is full, so that guesses against made-up names
   * cannot fill the table real accounts are tracked in.
   */
  failed(account: string, address: string, known = true): boolean {
    const now = this.now();
    const key = accountKey(account);
    const real = this.current(this.accounts, key, now);
    const madeUp = this.current(this.unknownAccounts, key, now);
    let map = this.accounts;
    if (known && madeUp) {
      // A real account's failures are never kept where they can be pushed out (`Alice` may have been
      // counted as made up before `alice` failed).
      this.unknownAccounts.delete(key);
      if (real) {
        real.count += madeUp.count;
        real.until = Math.max(real.until, madeUp.until);
        real.pending += madeUp.pending;
      } else this.accounts.set(key, madeUp);
    } else if (!known && !(real && real.count > 0)) {
      map = this.unknownAccounts;
      if (real) {
        // Reserved in `accounts` before the name was known to be made up: the attempt moves over.
        real.pending = Math.max(0, real.pending - 1);
        if (real.pending === 0) this.accounts.delete(key);
        if (madeUp) madeUp.pending += 1;
        else this.unknownAccounts.set(key, { count: 0, last: now, until: 0, pending: 1 });
      }
    }
    const reached = this.count(map, key, this.limits.accountFailures, now);
    this.count(this.addresses, addressKey(address), this.limits.addressFailures, now);
    return reached;
  }

  /** A successful sign-in clears the account's failures (and ends its reserved attempt). */
  succeeded(account: string, address?: string): void {
    this.accounts.delete(accountKey(account));
    this.unknownAccounts.delete(accountKey(account));
    if (address !== undefined) this.unreserve(this.addresses, addressKey(address));
  }

  /** Ends a reserved attempt whose password was never checked (the console was busy, or it failed). */
  released(account: string, address: string): void {
    const key = accountKey(account);
    if (!this.unreserve(this.accounts, key)) this.unreserve(this.unknownAccounts, key);
    this.unreserve(this.addresses, addressKey(address));
  }

  /** The table `account` is tracked in: the unknown names' when it is there, else the accounts'. */
  private accountsOf(account: string): Map<string, Failures> {
    return this.unknownAccounts.has(accountKey(account)) ? this.unknownAccounts : this.accounts;
  }

  private unreserve(map: Map<string, Failures>, key: string): boolean {
    const failures = map.get(key);
    if (!failures || failures.pending === 0) return false;
    failures.pending -= 1;
    return true;
  }

  private count(map: Map<string, Failures>, key: string, limit: number, now: number): boolean {
    const failures = this.current(map, key, now) ?? { count: 0, last: now, until: 0, pending: 0 };
    if (failures.pending > 0) failures.pending -= 1;
    failures.count += 1;
    failures.last = now;
    const over = failures.count - limit; // 0: the failure that reached the limit
    if (over >= 0) {
      const delay = this.limits.baseDelayMs * 2 ** Math.min(over, 30);
      failures.until = now + Math.min(this.limits.maxDelayMs, delay);
    }
    map.delete(key); // re-inserted last: the map's order is staleness order
    map.set(key, failures);
    if (map === this.unknownAccounts) {
      // A made-up name's lockout protects no one: the stalest goes, so the table stays bounded.
      for (const [stalest, entry] of map) {
        if (map.size <= MAX_TRACKED) break;
        if (entry.pending === 0) map.delete(stalest);
      }
    } else if (map.size > MAX_TRACKED) this.makeRoom(map, now);
    return over === 0;
  }

  /**
   * Forgets the stalest entry that is neither waiting nor being checked; false when there is none (filling
   * the table with other names or addresses must not lift a lockout).
   */
  private makeRoom(map: Map<string, Failures>, now: number): boolean {
    for (const [key, failures] of map) {
      if (failures.until <= now && failures.pending === 0) {
        map.delete(key);
        return true;
      }
    }
    return false;
  }

  private current(map: Map<string, Failures>, key: string, now: number): Failures | undefined {
    const failures = map.get(key);
    // Forgotten only after a quiet `forgetAfterMs` once its wait is over: a wait never restarts the count.
    if (
      failures &&
      failures.pending === 0 &&
      now - Math.max(failures.last, failures.until) >= this.limits.forgetAfterMs
    ) {
      map.delete(key);
      return undefined;
    }
    return failures;
  }
}

/**
 * The key of an address: an IPv4 address as it is (an IPv4-mapped IPv6 one as IPv4), an IPv6 address by its
 * /64 network, the smallest block one client is given (one client could otherwise try from 2^64 addresses).
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!isIPv6(address)) return address;
  const [head, tail = ''] = address.split('%')[0].split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const groups = address.includes('::')
    ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((group) => parseInt(group, 16).toString(16))
    .join(':')}::/64`;
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
