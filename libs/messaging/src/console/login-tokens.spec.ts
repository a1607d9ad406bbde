import { LoginTokens } from './login-tokens';

describe(LoginTokens.name, () => {
  describe('consume', () => {
    it('takes a token it issued once, with its cookie, before it expires', () => {
      const now = { ms: 0 };
      const tokens = new LoginTokens(60_000, () => now.ms);
      const token = tokens.issue();
      expect(tokens.consume(token, undefined)).toBe(false);
      expect(tokens.consume(token, token)).toBe(true);
      expect(tokens.consume(token, token)).toBe(false);
      const late = tokens.issue();
      now.ms += 60_000;
      expect(tokens.consume(late, late)).toBe(false);
    });

    it('refuses a token made elsewhere, and one whose expiry was edited', () => {
      const tokens = new LoginTokens(60_000, () => 0);
      const [, nonce, mac] = tokens.issue().split('.');
      const edited = `999999999.${nonce}.${mac}`;
      expect(tokens.consume(edited, edited)).toBe(false);
      expect(tokens.consume('x.y.z', 'x.y.z')).toBe(false);
    });

    it('stays bounded: once it forgets a used token, every token as old or older is refused', () => {
      const now = { ms: 0 };
      const tokens = new LoginTokens(15 * 60_000, () => now.ms);
      const first = tokens.issue();
      expect(tokens.consume(first, first)).toBe(true);
      now.ms += 1;
      const unused = tokens.issue();
      for (let i = 0; i < 50_000; i++) {
        const token = tokens.issue();
        expect(tokens.consume(token, token)).toBe(true);
      }
      expect((tokens as unknown as { used: Map<string, number> }).used.size).toBe(50_000);
      expect(tokens.consume(first, first)).toBe(false);
      expect(tokens.consume(unused, unused)).toBe(true); // issued after the forgotten one
    });
  });
});
