import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConsoleAction, mayDo } from './console-access';
import {
  addCookie,
  ConsoleRequest,
  ConsoleResponse,
  cookie,
  cookiesOf,
  field,
  sendPage,
} from './console-http';
import { ConsoleRole, MessagingConsoleOptions } from './console-options.interface';
import { ConsoleSession, ConsoleSessions, randomToken, tokensMatch } from './console-sessions';
import { MESSAGING_CONSOLE_BASE } from './console.tokens';
import { MESSAGING_CONSOLE_OPTIONS } from './messaging-console.module-definition';
import { loginPage, messagePage } from './views/access-views';
import { PageContext } from './views/layout';

const SESSION_COOKIE = 'messaging_console_session';
const LOGIN_COOKIE = 'messaging_console_login';
const DEFAULT_SESSION_TTL_MS = 30 * 60_000;
const LOGIN_FORM_TTL_S = 15 * 60;

/**
 * Who may do what in the console: sessions (sign-in through the application's authenticator, a session
 * cookie, expiry), roles per action, and the CSRF token every state-changing request must carry. Every
 * sign-in, sign-out and refusal goes to the audit log.
 */
@Injectable()
export class ConsoleGate {
  private readonly logger = new Logger('MessagingConsole');
  private readonly sessions: ConsoleSessions;
  /** Roles that may read payloads. */
  readonly payloadRoles: readonly ConsoleRole[];

  constructor(
    @Inject(MESSAGING_CONSOLE_OPTIONS) private readonly options: MessagingConsoleOptions,
    @Inject(MESSAGING_CONSOLE_BASE) readonly base: string,
  ) {
    const clock = options.clock ?? (() => new Date());
    this.sessions = new ConsoleSessions(options.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS, () =>
      clock().getTime(),
    );
    this.payloadRoles = options.payloadRoles ?? ['operator', 'approver'];
  }

  /** The page context of a session (or of nobody, before sign-in). */
  context(session?: ConsoleSession): PageContext {
    return { base: this.base, user: session?.user, csrfToken: session?.csrfToken };
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
    const session = this.sessions.find(cookiesOf(request)[SESSION_COOKIE]);
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
    const session = this.sessions.find(cookiesOf(request)[SESSION_COOKIE]);
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

  /** The sign-in page, with a fresh token for the form (login CSRF, double-submitted in a cookie). */
  loginForm(request: ConsoleRequest, response: ConsoleResponse, error?: string, status = 200): void {
    const token = randomToken();
    addCookie(response, cookie(LOGIN_COOKIE, token, this.cookieOptions(request, LOGIN_FORM_TTL_S)));
    sendPage(response, status, loginPage(this.context(), token, error));
  }

  /** Checks the sign-in form's token and the credentials; opens a session or shows the form again. */
  async signIn(request: ConsoleRequest, response: ConsoleResponse): Promise<void> {
    if (!tokensMatch(field(request.body, '_csrf'), cookiesOf(request)[LOGIN_COOKIE])) {
      await this.record('(anonymous)', 'CSRF_REFUSED', 'sign-in form without a valid token');
      return this.loginForm(request, response, 'The sign-in form expired. Please sign in again.', 403);
    }
    const name = field(request.body, 'name') ?? '';
    const password = typeof request.body?.password === 'string' ? request.body.password : '';
    const user = name && password ? await this.options.authenticator.authenticate(name, password) : undefined;
    if (!user) {
      await this.record(name.slice(0, 100) || '(anonymous)', 'SIGN_IN_FAILED', 'wrong name or password');
      return this.loginForm(request, response, 'Wrong user name or password.', 401);
    }
    const session = this.sessions.open(user);
    addCookie(response, cookie(LOGIN_COOKIE, '', this.cookieOptions(request, 0)));
    const ttlS = ((this.options.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS) / 1000) | 0;
    addCookie(response, cookie(SESSION_COOKIE, session.id, this.cookieOptions(request, ttlS)));
    await this.record(user.name, 'SIGNED_IN', `roles: ${user.roles.join(', ') || 'none'}`);
    response.redirect(303, this.base);
  }

  /** Ends the session (the form carried its CSRF token: `forForm` checked it). */
  async signOut(session: ConsoleSession, request: ConsoleRequest, response: ConsoleResponse): Promise<void> {
    this.sessions.close(session.id);
    addCookie(response, cookie(SESSION_COOKIE, '', this.cookieOptions(request, 0)));
    await this.record(session.user.name, 'SIGNED_OUT');
    response.redirect(303, `${this.base}/login`);
  }

  /** Records a console access (sign-in, refusal, payload shown) in the audit log. */
  async record(actor: string, outcome: string, detail?: string, source?: string): Promise<void> {
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
    await this.record(session?.user.name ?? '(anonymous)', outcome, detail);
    const text =
      outcome === 'CSRF_REFUSED'
        ? 'Refused: this request did not come from a console form (missing or wrong CSRF token).'
        : outcome === 'NOT_SIGNED_IN'
          ? 'Refused: sign in first.'
          : 'Refused: your role may not do this.';
    sendPage(response, 403, messagePage(this.context(session), 'Forbidden', text));
  }

  private cookieOptions(request: ConsoleRequest, maxAgeSeconds: number) {
    return { path: this.base, maxAgeSeconds, secure: request.secure };
  }
}
