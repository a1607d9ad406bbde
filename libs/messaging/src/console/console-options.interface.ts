import type { ApproverSigner } from '../redrive/approvals/approver-keys';
import type { RedriveLedger } from '../redrive/ledger/redrive-ledger.interface';
import type { RedriveService } from '../redrive/redrive.service';
import type { ConsolePlanStore } from './plans/console-plan-store.interface';
import type { SignInLimits } from './sign-in-guard';
import type { Clock } from '../common/clock';

/**
 * What a console user may do: a `viewer` reads figures, dead letters (without payloads) and the audit log;
 * an `operator` also plans and executes redrives; an `approver` approves plans, never their own.
 */
export type ConsoleRole = 'viewer' | 'operator' | 'approver';

/** A signed-in console user, as the application's `ConsoleAuthenticator` knows them. */
export interface ConsoleUser {
  /** The user's name: the actor in the audit log and, for an approver, the approver's name in approvals. */
  readonly name: string;
  /** What they may do. A user without roles may sign in and see nothing. */
  readonly roles: readonly ConsoleRole[];
}

/**
 * How the application authenticates console users (the console never admits anyone anonymously). The
 * console owns the session that follows; the application owns the users and their passwords.
 */
export interface ConsoleAuthenticator {
  /**
   * The user with this name and password, or undefined when they do not match (the console answers the
   * same way whether the name or the password was wrong).
   */
  authenticate(name: string, password: string): Promise<ConsoleUser | undefined>;
  /**
   * Optional: whether a user of this name exists, asked only after `authenticate` said no. The console then
   * counts failures of names nobody has apart from real accounts (with the same limit, so a guesser cannot
   * tell them apart), and guesses against made-up names cannot fill the table a real account's lockout is
   * kept in. Without it every name is tracked as an account. Never shown to the person signing in.
   */
  knows?(name: string): boolean | Promise<boolean>;
}

/** A service whose Prometheus metrics the overview reads (its `/metrics`, see docs/guide/10-operations.md). */
export interface ConsoleMetricsSource {
  /** How the overview names it, e.g. `post-service`. */
  readonly name: string;
  /** Its metrics endpoint, e.g. `http://post-service:3000/metrics`. */
  readonly url: string;
}

/** What `MessagingConsoleModule` works with. */
export interface MessagingConsoleOptions {
  /**
   * The redrive service (admin broker credential, approver keyring, ledger): the same one the
   * `nest-messaging` CLI builds. The console plans, approves and executes through it only.
   */
  readonly redrive: RedriveService;
  /** The ledger `redrive` records in: the console reads the audit log from it and records accesses. */
  readonly ledger: RedriveLedger;
  /**
   * Start although the ledger's database login can rewrite the audit log (its owner, a member of the owner
   * role, a superuser, UPDATE/DELETE/TRUNCATE/TRIGGER: `PostgresRedriveLedger.rewriteRights()`): logged as
   * an error at start, and every entry the ledger writes from then on records the override `rewrite-rights`.
   * Default false: the console refuses to start (`AuditLogRewritableError`).
   */
  readonly allowRewritableAudit?: boolean;
  /** Who may sign in, with which roles. */
  readonly authenticator: ConsoleAuthenticator;
  /**
   * The approvers' own Ed25519 keys, which the console signs with for the signed-in approver (of the same
   * name, or, with an identity map, one of whose accounts is the signed-in user). Each must be in
   * `redrive`'s reviewed keyring with the same public key, or the console does not start. Default: none
   * (nobody can approve here).
   */
  readonly approverSigners?: readonly ApproverSigner[];
  /** The dead-letter destinations to show (RabbitMQ cannot list queues: name them). */
  readonly deadLetterQueues: readonly string[];
  /** The services whose `/metrics` the overview reads. Default: none. */
  readonly metricsSources?: readonly ConsoleMetricsSource[];
  /**
   * A session ends this long after its user's last request, ms (a page refreshing itself does not count).
   * Default 15 minutes.
   */
  readonly sessionIdleMs?: number;
  /** A session ends this long after sign-in at the latest, however active, ms. Default 12 hours. */
  readonly sessionTtlMs?: number;
  /**
   * Where plans are kept between plan, approval and execution. Default: this process's memory (a restart
   * forgets them); `PostgresConsolePlanStore` keeps them in the admin database.
   */
  readonly planStore?: ConsolePlanStore;
  /** How long a plan waits for its approval before it is expired, ms. Default 24 hours. */
  readonly planTtlMs?: number;
  /** How long an approval given here is valid, ms. Default 15 minutes (at most 24 hours). */
  readonly approvalTtlMs?: number;
  /** Roles that may read a dead letter's payload. Default `['operator', 'approver']` (viewers never). */
  readonly payloadRoles?: readonly ConsoleRole[];
  /**
   * Limits on sign-ins: failures per account and per address before a wait, the waits, sign-ins checked
   * at once. Default: 5 per account and 20 per address within 15 minutes, then 30 s doubling up to 15 minutes;
   * 2 checked at once, 20 waiting, at most 4 of them from one address or of one name (see `SignInLimits`).
   */
  readonly signIn?: SignInLimits;
  /**
   * The console is served over HTTPS only (directly or behind a TLS proxy): cookies are `Secure`, named
   * `__Host-…` (so path `/`, no domain) and pages send HSTS (`Strict-Transport-Security: max-age=31536000`).
   * Default false: cookies are `Secure` only when the request itself came over HTTPS (`request.secure`,
   * which behind a proxy needs Express's `trust proxy`).
   */
  readonly secureCookies?: boolean;
  /**
   * How often the overview, the redrive pages and the audit log refresh themselves in the browser, seconds
   * (not while a form on them is in use; not counted as activity for `sessionIdleMs`). 0: never. Default 30.
   */
  readonly pageRefreshSeconds?: number;
  /** At most this many bytes of a payload are shown (the rest is counted, not sent). Default 65536. */
  readonly payloadPreviewBytes?: number;
  /**
   * At most this many bytes of a payload are in its download (a larger one is cut there). Default 8 MiB.
   */
  readonly payloadDownloadBytes?: number;
  /** The clock sessions expire, sign-ins wait and approvals are dated by (the library's `Clock`; only `now` is read). Default: the system clock. */
  readonly clock?: Pick<Clock, 'now'>;
}

/** Fixed when the module is defined, also with `forRootAsync`. */
export interface MessagingConsoleExtras {
  /** The path the console is mounted at, e.g. `ops/console`. Default `console`. */
  readonly path: string;
}
