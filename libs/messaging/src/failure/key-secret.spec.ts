import { randomBytes } from 'node:crypto';
import { InvalidKeySecretError } from './invalid-key-secret.error';
import { parseKeySecret } from './key-secret';

describe(parseKeySecret.name, () => {
  it('accepts 32 random bytes in base64 or base64url and derives two different subkeys', () => {
    const bytes = randomBytes(32);
    const secret = parseKeySecret(bytes.toString('base64'), 'X');
    expect(secret.pseudonymKey).toHaveLength(32);
    expect(secret.sealKey).toHaveLength(32);
    expect(secret.pseudonymKey.equals(secret.sealKey)).toBe(false);
    expect(parseKeySecret(bytes.toString('base64url'), 'X').sealKey.equals(secret.sealKey)).toBe(true);
  });

  it.each(['', 'x', 'hunter2', randomBytes(31).toString('base64'), 'not base64 at all but long enough!!'])(
    'refuses %p without showing it',
    (text) => {
      expect(() => parseKeySecret(text, 'MESSAGING_KEY_SECRET')).toThrow(InvalidKeySecretError);
      try {
        parseKeySecret(text, 'MESSAGING_KEY_SECRET');
      } catch (error) {
        expect((error as Error).message).toContain('MESSAGING_KEY_SECRET');
        if (text.length > 3) expect((error as Error).message).not.toContain(text);
      }
    },
  );
});
