import { randomBytes, timingSafeEqual } from 'node:crypto';
import { ConsoleUser } from './console-options.interface';

/** A signed-in user's session: who, until when, and the token every form must send back (CSRF). */
export interface ConsoleSession {
  readonly id: string;
  readonly user: ConsoleUser;
  readonly csrfToken: string;
  readonly expiresAt: number;
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
 * A session ends `ttlMs` after sign-in, whatever happens in between, or at sign-out.
 */
export class ConsoleSessions {
  private readonly sessions = new Map<string, ConsoleSession>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** Opens a session for `user`, with a fresh id and CSRF token. */
  open(user: ConsoleUser): ConsoleSession {
    this.sweep();
    const session = { id: randomToken(), user, csrfToken: randomToken(), expiresAt: this.now() + this.ttlMs };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session with this id, or undefined (unknown or expired: an expired one is dropped). */
  find(id: string | undefined): ConsoleSession | undefined {
    if (!id) return undefined;
    const session = this.sessions.get(id);
    if (session && session.expiresAt <= this.now()) {
      this.sessions.delete(id);
      return undefined;
    }
    return session;
  }

  /** Ends a session. */
  close(id: string): void {
    this.sessions.delete(id);
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, session] of this.sessions) if (session.expiresAt <= now) this.sessions.delete(id);
  }
}
