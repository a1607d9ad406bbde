import { randomBytes, timingSafeEqual } from 'node:crypto';
import { ConsoleUser } from './console-options.interface';

/**
 * A signed-in user's session: who, until when, and the token every form must send back (CSRF). It ends
 * `idleMs` after the user last did something (`idleUntil`, which each request of theirs moves on), and at
 * the latest `maxLifetimeMs` after sign-in (`endsAt`).
 */
export interface ConsoleSession {
  readonly id: string;
  readonly user: ConsoleUser;
  readonly csrfToken: string;
  /** When it ends unless the user does something before, ms since the epoch. */
  readonly idleUntil: number;
  /** When it ends whatever the user does, ms since the epoch. */
  readonly endsAt: number;
}

/** How long a session lives: idle, and at most. */
export interface SessionLifetime {
  /** A session ends this long after the user's last request, ms. */
  readonly idleMs: number;
  /** A session ends this long after sign-in at the latest, ms. */
  readonly maxLifetimeMs: number;
}

/** A random token, base64url, 256 bits. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Compares a token sent by a client with the expected one in constant time; missing never matches. */
export function tokensMatch(sent: unknown, expected: string | undefined): boolean {
  if (typeof sent !== 'string' || !expected || sent.length === 0) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Sessions of the console, in this process's memory (one console process; a restart signs everyone out).
 * A session ends after `idleMs` without a request of its user (a sliding expiry: `find(id, true)` moves it
 * on), after `maxLifetimeMs` whatever happens, or at sign-out.
 */
export class ConsoleSessions {
  private readonly sessions = new Map<string, ConsoleSession>();

  constructor(
    private readonly lifetime: SessionLifetime,
    private readonly now: () => number,
  ) {}

  /** Opens a session for `user`, with a fresh id and CSRF token. */
  open(user: ConsoleUser): ConsoleSession {
    this.sweep();
    const now = this.now();
    const endsAt = now + this.lifetime.maxLifetimeMs;
    const session: ConsoleSession = {
      id: randomToken(),
      user,
      csrfToken: randomToken(),
      idleUntil: Math.min(now + this.lifetime.idleMs, endsAt),
      endsAt,
    };
    this.sessions.set(session.id, session);
    return session;
  }

  /**
   * The live session with this id, or undefined (unknown or ended: an ended one is dropped). `activity`:
   * the request is the user's doing, so the session's idle time starts again (a page refreshing itself is
   * not, or an open page would keep a session alive forever).
   */
  find(id: string | undefined, activity = false): ConsoleSession | undefined {
    if (!id) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    const now = this.now();
    if (!isLive(session, now)) {
      this.sessions.delete(id);
      return undefined;
    }
    if (!activity) return session;
    const moved = { ...session, idleUntil: Math.min(now + this.lifetime.idleMs, session.endsAt) };
    this.sessions.set(id, moved);
    return moved;
  }

  /** Ends a session. */
  close(id: string): void {
    this.sessions.delete(id);
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, session] of this.sessions) if (!isLive(session, now)) this.sessions.delete(id);
  }
}

function isLive(session: ConsoleSession, now: number): boolean {
  return now < session.idleUntil && now < session.endsAt;
}
