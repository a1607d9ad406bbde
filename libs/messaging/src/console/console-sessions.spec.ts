import { ConsoleSessions, randomToken, tokensMatch } from './console-sessions';

describe(ConsoleSessions.name, () => {
  const alice = { name: 'alice', roles: ['operator'] as const };

  describe('find', () => {
    it('ends a session idle for idleMs, then never again', () => {
      let now = 1_000;
      const sessions = new ConsoleSessions({ idleMs: 60_000, maxLifetimeMs: 3_600_000 }, () => now);
      const session = sessions.open(alice);
      expect(sessions.find(session.id)?.id).toBe(session.id);
      now += 59_999;
      expect(sessions.find(session.id)?.id).toBe(session.id);
      now += 1;
      expect(sessions.find(session.id)).toBeUndefined();
      now -= 10; // a clock going back does not bring it back: it was dropped
      expect(sessions.find(session.id)).toBeUndefined();
    });

    it('keeps a session alive while its user does something (sliding), not while a page refreshes itself', () => {
      let now = 0;
      const sessions = new ConsoleSessions({ idleMs: 15 * 60_000, maxLifetimeMs: 12 * 3_600_000 }, () => now);
      const session = sessions.open(alice);
      // Forty minutes of work, a request every ten: longer than the idle time, the session lives on.
      for (let minute = 10; minute <= 40; minute += 10) {
        now = minute * 60_000;
        expect(sessions.find(session.id, true)?.idleUntil).toBe((minute + 15) * 60_000);
      }
      // Then only a page refreshing itself, every minute: the session ends 15 minutes after the last click.
      for (let minute = 41; minute < 55; minute++) {
        now = minute * 60_000;
        expect(sessions.find(session.id, false)?.id).toBe(session.id);
      }
      now = 55 * 60_000;
      expect(sessions.find(session.id, false)).toBeUndefined();
    });

    it('ends a session maxLifetimeMs after sign-in however active its user', () => {
      let now = 0;
      const sessions = new ConsoleSessions({ idleMs: 60_000, maxLifetimeMs: 150_000 }, () => now);
      const session = sessions.open(alice);
      now = 50_000;
      expect(sessions.find(session.id, true)).toBeDefined();
      now = 100_000;
      expect(sessions.find(session.id, true)?.idleUntil).toBe(150_000);
      now = 149_999;
      expect(sessions.find(session.id, true)).toBeDefined();
      now = 150_000;
      expect(sessions.find(session.id, true)).toBeUndefined();
    });

    it('knows no session for a missing, unknown or closed id', () => {
      const sessions = new ConsoleSessions({ idleMs: 60_000, maxLifetimeMs: 60_000 }, () => 0);
      const session = sessions.open(alice);
      expect(sessions.find(undefined)).toBeUndefined();
      expect(sessions.find('')).toBeUndefined();
      expect(sessions.find(randomToken())).toBeUndefined();
      sessions.close(session.id);
      expect(sessions.find(session.id)).toBeUndefined();
    });
  });

  describe('open', () => {
    // claim: C-78
    it('gives each session its own id and CSRF token, 256 random bits each', () => {
      const sessions = new ConsoleSessions({ idleMs: 60_000, maxLifetimeMs: 60_000 }, () => 0);
      const [a, b] = [sessions.open(alice), sessions.open(alice)];
      expect(new Set([a.id, b.id, a.csrfToken, b.csrfToken]).size).toBe(4);
      expect(Buffer.from(a.csrfToken, 'base64url')).toHaveLength(32);
    });
  });
});

describe(tokensMatch.name, () => {
  it('matches the same token only; never a missing, empty or non-string one', () => {
    const token = randomToken();
    expect(tokensMatch(token, token)).toBe(true);
    expect(tokensMatch(`${token}x`, token)).toBe(false);
    expect(tokensMatch(token.slice(1), token)).toBe(false);
    expect(tokensMatch(undefined, token)).toBe(false);
    expect(tokensMatch('', '')).toBe(false);
    expect(tokensMatch(['a'], 'a')).toBe(false);
    expect(tokensMatch(token, undefined)).toBe(false);
  });
});
