import { ConsoleSessions, randomToken, tokensMatch } from './console-sessions';

describe(ConsoleSessions.name, () => {
  const alice = { name: 'alice', roles: ['operator'] as const };

  describe('find', () => {
    it('finds an open session until its time is up, then never again', () => {
      let now = 1_000;
      const sessions = new ConsoleSessions(60_000, () => now);
      const session = sessions.open(alice);
      expect(sessions.find(session.id)).toBe(session);
      now += 59_999;
      expect(sessions.find(session.id)).toBe(session);
      now += 1;
      expect(sessions.find(session.id)).toBeUndefined();
      now -= 10; // a clock going back does not bring it back: it was dropped
      expect(sessions.find(session.id)).toBeUndefined();
    });

    it('knows no session for a missing, unknown or closed id', () => {
      const sessions = new ConsoleSessions(60_000, () => 0);
      const session = sessions.open(alice);
      expect(sessions.find(undefined)).toBeUndefined();
      expect(sessions.find('')).toBeUndefined();
      expect(sessions.find(randomToken())).toBeUndefined();
      sessions.close(session.id);
      expect(sessions.find(session.id)).toBeUndefined();
    });
  });

  describe('open', () => {
    it('gives each session its own id and CSRF token, 256 random bits each', () => {
      const sessions = new ConsoleSessions(60_000, () => 0);
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
