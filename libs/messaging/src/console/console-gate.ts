import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { AnonymousRefusals } from './anonymous-refusals';
import { ConsoleAction, mayDo } from './console-access';
import { ConsoleCookies } from './console-cookies';
import { ConsoleRequest, ConsoleResponse, field, sendPage } from './console-http';
import { ConsoleRole, ConsoleUser, MessagingConsoleOptions } from './console-options.interface';
import { ConsoleSession, ConsoleSessions, tokensMatch } from './console-sessions';
import { LoginTokens } from './login-tokens';
import { BoundedConcurrency, SignInGuard } from './sign-in-guard';
import { MESSAGING_CONSOLE_BASE } from './console.tokens';
import { MESSAGING_CONSOLE_OPTIONS } from './messaging-console.module-definition';
import { loginPage, messagePage } from './views/access-views';
import { PageContext } from './views/layout';
import { systemClock } from '../common/clock';
import { isLoopbackHost } from '../redrive/admin-connection';

const SESSION_COOKIE = 'messaging_console_session';
const LOGIN_COOKIE = 'messaging_console_login';
const DEFAULT_SESSION_IDLE_MS = 15 * 60_000;
const DEFAULT_SESSION_TTL_MS = 12 * 60 * 60_000;
/** The header the console's script sends when a page refreshes itself: not the user's doing. */
export const REFRESH_HEADER = 'x-console-refresh';
const LOGIN_FORM_TTL_S = 15 * 60;
const DEFAULT_REFRESH_SECONDS = 30;
/** Refusals without a session go to the audit log as one entry per minute at most. */
const ANONYMOUS_INTERVAL_MS = 60_000;

/**
 * Who may do what in the console: sessions (sign-in through the application's authenticator, a session
 * cookie, expiry), roles per action, and the CSRF token every state-changing request must carry. Sign-ins
 * are throttled per account and per address (`SignInGuard`), checked a few at a time, and their form
 * carries a token the server issued. Sign-ins, sign-outs and refusals of signed-in users go to the audit
 * log; refusals without a session are counted and written as one entry a minute.
 */
@Injectable()
export class ConsoleGate implements OnModuleDestroy {
  private readonly logger = new Logger('MessagingConsole');
  private readonly sessions: ConsoleSessions;
  private readonly guard: SignInGuard;
  private readonly checking: BoundedConcurrency;
  private readonly loginTokens: LoginTokens;
  private readonly anonymous: AnonymousRefusals;
  private readonly cookies: ConsoleCookies;
  private readonly now: () => number;
  /** Roles that may read payloads. */
  readonly payloadRoles: readonly ConsoleRole[];
  private remoteRefusedLogged = false;

  constructor(
    @Inject(MESSAGING_CONSOLE_OPTIONS) private readonly options: MessagingConsoleOptions,
    @Inject(MESSAGING_CONSOLE_BASE) readonly base: string,
  ) {
    const clock = options.clock ?? systemClock;
    const now = (this.now = () => clock.now());
    this.sessions = new ConsoleSessions(
      {
        idleMs: options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS,
        maxLifetimeMs: options.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS,
      },
      now,
    );
    this.guard = new SignInGuard(options.signIn ?? {}, now);
    this.checking = new BoundedConcurrency(this.guard.limits.maxConcurrent, this.guard.limits.maxWaiting);
    this.loginTokens = new LoginTokens(LOGIN_FORM_TTL_S * 1000, now);
    this.anonymous = new AnonymousRefusals(ANONYMOUS_INTERVAL_MS, now);
    this.cookies = new ConsoleCookies(base, options.secureCookies === true);
    this.payloadRoles = options.payloadRoles ?? ['operator', 'approver'];
  }

  /** The page context of a session (or of nobody, before sign-in). */
  context(session?: ConsoleSession): PageContext {
    return {
      base: this.base,
      user: session?.user,
      csrfToken: session?.csrfToken,
      refreshSeconds: this.options.pageRefreshSeconds ?? DEFAULT_REFRESH_SECONDS,
    };
  }

  /** True when the session's user may do `action`. */
  may(session: ConsoleSession, action: ConsoleAction): boolean {
    return mayDo(session.user, action, this.payloadRoles);
  }

  /**
   * The session of a page request whose user may do `action`; otherwise answers (sign-in page for nobody,
   * 403 for a role that may not) and returns undefined.
   */
  async forPage(request: ConsoleRequest, response: ConsoleResponse, action: ConsoleAction = 'view') {
    this.cookies.securityHeaders(response);
    if (!this.servedHere(request, response)) return undefined;
    // A page refreshing itself (the console's script says so) does not keep an idle session alive.
    const activity = request.headers[REFRESH_HEADER] !== '1';
    const session = this.sessions.find(this.cookies.read(request, SESSION_COOKIE), activity);
    if (!session) {
      response.redirect(303, `${this.base}/login`);
      return undefined;
    }
    return (await this.allowed(session, action, request, response)) ? session : undefined;
  }

  /**
   * The session of a form post (a state-changing request) whose user may do `action` and whose CSRF token
   * matches; otherwise answers 403 and returns undefined. Checked in that order, before the form is read.
   */
  async forForm(request: ConsoleRequest, response: ConsoleResponse, action: ConsoleAction) {
    this.cookies.securityHeaders(response);
    if (!this.servedHere(request, response)) return undefined;
    const session = this.sessions.find(this.cookies.read(request, SESSION_COOKIE), true);
    if (!session) {
      await this.refuse(response, undefined, 'NOT_SIGNED_IN', `${request.method} without a session`);
      return undefined;
    }
    if (!tokensMatch(field(request.body, '_csrf'), session.csrfToken)) {
      await this.refuse(response, session, 'CSRF_REFUSED', 'the form carried no valid CSRF token');
      return undefined;
    }
    return (await this.allowed(session, action, request, response)) ? session : undefined;
  }

  /** The sign-in page, with a token the server issued for its form (login CSRF), also in a cookie. */
  loginForm(
    request: ConsoleRequest,
    response: ConsoleResponse,
    error?: string,
    status = 200,
    retryAfterSeconds?: number,
  ): void {
    this.cookies.securityHeaders(response);
    if (!this.servedHere(request, response)) return;
    const token = this.loginTokens.issue();
    this.cookies.set(response, request, LOGIN_COOKIE, token, LOGIN_FORM_TTL_S);
    if (retryAfterSeconds !== undefined) response.setHeader('Retry-After', String(retryAfterSeconds));
    sendPage(response, status, loginPage(this.context(), token, error));
  }

  /**
   * Checks the sign-in form's token, whether the account and the address may try now, then the
   * credentials (a few at a time); opens a session or shows the form again.
   */
  async signIn(request: ConsoleRequest, response: ConsoleResponse): Promise<void> {
    this.cookies.securityHeaders(response);
    if (!this.servedHere(request, response)) return;
    // Taken once, whatever follows: a replayed form is refused before its password is looked at.
    if (!this.loginTokens.consume(field(request.body, '_csrf'), this.cookies.read(request, LOGIN_COOKIE))) {
      await this.countAnonymous('CSRF_REFUSED');
      return this.loginForm(request, response, 'The sign-in form expired. Please sign in again.', 403);
    }
    const name = field(request.body, 'name') ?? '';
    const password = typeof request.body?.password === 'string' ? request.body.password : '';
    const address = request.ip ?? 'unknown';
    const verdict = this.guard.reserve(name, address);
    if (!verdict.allowed) {
      await this.countAnonymous('SIGN_IN_THROTTLED');
      const seconds = Math.ceil(verdict.retryAfterMs / 1000);
      const whose = verdict.by === 'account' ? 'for this account' : 'from this address';
      const what = verdict.inFlight ? 'sign-ins at once' : 'failed sign-ins';
      const text = `Too many ${what} ${whose}: try again in ${seconds} s.`;
      return this.loginForm(request, response, text, 429, seconds);
    }
    let checked: { value: ConsoleUser | undefined } | undefined;
    let known = true;
    try {
      // An empty name or password is checked too (and its answer ignored): it costs the authenticator's
      // work like any other, so the time taken says nothing about the account (issue 45, finding 10).
      checked = await this.checking.run(async () => {
        const user = await this.options.authenticator.authenticate(name, password);
        if (user && name && password) return user;
        known = name !== '' && (await this.options.authenticator.knows?.(name)) !== false;
        return undefined;
      });
    } catch (error) {
      this.guard.released(name, address);
      throw error;
    }
    if (!checked) {
      this.guard.released(name, address);
      await this.countAnonymous('SIGN_IN_BUSY');
      return this.loginForm(request, response, 'Too many sign-ins at once: try again in a moment.', 503, 5);
    }
    const user = checked.value;
    if (!user) {
      const limitReached = this.guard.failed(name, address, known);
      await this.countAnonymous('SIGN_IN_FAILED');
      if (limitReached) {
        // The typed name may be a password typed in the wrong field: only its length is kept.
        const detail = `the account ${masked(name)} must wait: ${this.guard.limits.accountFailures} failed sign-ins`;
        this.logger.warn(`Sign-in: ${detail}.`);
        await this.record('(sign-in)', 'SIGN_IN_LOCKED', detail);
      }
      return this.loginForm(request, response, 'Wrong user name or password.', 401);
    }
    this.guard.succeeded(name, address);
    const session = this.sessions.open(user);
    this.cookies.set(response, request, LOGIN_COOKIE, '', 0);
    // The cookie lasts as long as the session may; the console ends it earlier when it is idle.
    this.cookies.set(response, request, SESSION_COOKIE, session.id, (session.endsAt - this.now()) / 1000);
    await this.record(user.name, 'SIGNED_IN', `roles: ${user.roles.join(', ') || 'none'}`);
    response.redirect(303, this.base);
  }

  /** Ends the session (the form carried its CSRF token: `forForm` checked it). */
  async signOut(session: ConsoleSession, request: ConsoleRequest, response: ConsoleResponse): Promise<void> {
    this.sessions.close(session.id);
    this.cookies.set(response, request, SESSION_COOKIE, '', 0);
    await this.record(session.user.name, 'SIGNED_OUT');
    response.redirect(303, `${this.base}/login`);
  }

  /** Records a console access (sign-in, refusal, payload shown, search by key) in the audit log. */
  async record(actor: string, outcome: string, detail?: string, source?: string): Promise<void> {
    await this.flushAnonymous(false);
    await this.write(actor, outcome, detail, source);
  }

  /** Writes the refusals without a session counted so far as one entry (when it is time, or `force`). */
  async flushAnonymous(force = true): Promise<void> {
    const counted = this.anonymous.take(force);
    if (counted) await this.write('(anonymous)', 'REFUSED_WITHOUT_SESSION', counted.detail);
  }

  /** On shutdown, what was counted is written. */
  async onModuleDestroy(): Promise<void> {
    await this.flushAnonymous().catch((error: unknown) =>
      this.logger.error(`Could not record the refusals counted before shutdown: ${String(error)}`),
    );
  }

  private async write(actor: string, outcome: string, detail?: string, source?: string): Promise<void> {
    try {
      await this.options.ledger.record({
        action: 'ACCESS',
        actor,
        transport: this.options.redrive.transport,
        source,
        outcome,
        detail,
      });
    } catch (error) {
      this.logger.error(`Could not record ${outcome} by ${actor} in the audit log: ${String(error)}`);
      throw error;
    }
  }

  /**
   * Without `secureCookies` the console answers only connections made to a loopback address of this machine
   * (a browser on it, or a TLS proxy beside it): from anywhere else its cookies and the passwords would cross
   * the network in clear text and a sibling subdomain could toss its cookies (issue 45, finding 14). Checked
   * on every request, whatever address the application listens on; otherwise a 403 that says why (logged once).
   * A request whose connection is unknown (no socket) is let through.
   */
  private servedHere(request: ConsoleRequest, response: ConsoleResponse): boolean {
    if (this.options.secureCookies === true) return true;
    const local = request.socket?.localAddress;
    if (local === undefined || isLoopbackConnection(local)) return true;
    const text =
      `This console answers connections to this machine's loopback address only, unless it is served over ` +
      `HTTPS with secureCookies (this request came to ${local}).`;
    if (!this.remoteRefusedLogged) {
      this.remoteRefusedLogged = true;
      this.logger.error(`${text} Set secureCookies and serve it over HTTPS, or listen on 127.0.0.1.`);
    }
    sendPage(response, 403, messagePage(this.context(), 'Refused', text));
    return false;
  }

  private async countAnonymous(outcome: string): Promise<void> {
    this.anonymous.count(outcome);
    await this.flushAnonymous(false);
  }

  private async allowed(
    session: ConsoleSession,
    action: ConsoleAction,
    request: ConsoleRequest,
    response: ConsoleResponse,
  ): Promise<boolean> {
    if (this.may(session, action)) return true;
    await this.refuse(
      response,
      session,
      'FORBIDDEN',
      `${action}: ${request.method} refused to the role(s) ${session.user.roles.join(', ') || 'none'}`,
    );
    return false;
  }

  private async refuse(
    response: ConsoleResponse,
    session: ConsoleSession | undefined,
    outcome: string,
    detail: string,
  ): Promise<void> {
    if (session) await this.record(session.user.name, outcome, detail);
    else await this.countAnonymous(outcome);
    const text =
      outcome === 'CSRF_REFUSED'
        ? 'Refused: this request did not come from a console form (missing or wrong CSRF token).'
        : outcome === 'NOT_SIGNED_IN'
          ? 'Refused: sign in first.'
          : 'Refused: your role may not do this.';
    sendPage(response, 403, messagePage(this.context(session), 'Forbidden', text));
  }

  /** A page that says why a signed-in person's request did not work (not found, refused, broker trouble). */
  fail(response: ConsoleResponse, session: ConsoleSession, status: number, text: string): void {
    sendPage(
      response,
      status,
      messagePage(this.context(session), status === 404 ? 'Not found' : 'Refused', text),
    );
  }
}

/**
 * A typed name's length only: it may be a password typed in the wrong field, and its first characters would
 * be shown to operators and approvers and logged (issue 45, finding 14).
 */
function masked(name: string): string {
  return `of a name of ${[...name].length} characters`;
}

/** A connection's local address on loopback: `127.x`, `::1`, or IPv4 loopback mapped into IPv6 (`::ffff:127.0.0.1`). */
export function isLoopbackConnection(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return isLoopbackHost(mapped ? mapped[1] : address);
}
