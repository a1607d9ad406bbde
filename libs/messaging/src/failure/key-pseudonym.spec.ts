import { randomBytes } from 'node:crypto';
import { isKeyPseudonym, keyPseudonym, sealKey, unsealKey } from './key-pseudonym';
import { parseKeySecret } from './key-secret';

const secret = parseKeySecret(randomBytes(32).toString('base64'), 'test');

describe('key-pseudonym', () => {
  describe(keyPseudonym.name, () => {
    it('is hmac: and 32 lower-case hex digits, stable for a key', () => {
      expect(keyPseudonym('42', secret)).toMatch(/^hmac:[0-9a-f]{32}$/);
      expect(keyPseudonym('author-42', secret)).toBe(keyPseudonym('author-42', secret));
    });

    it('differs for different keys and for different secrets', () => {
      const keys = ['42', '43', 'author-42', 'Author-42', ' 42', '', 'ü'];
      expect(new Set(keys.map((k) => keyPseudonym(k, secret))).size).toBe(keys.length);
      const other = parseKeySecret(randomBytes(32).toString('base64'), 'other');
      expect(keyPseudonym('42', other)).not.toBe(keyPseudonym('42', secret));
    });

    it('is recognised as a pseudonym; a real key is not', () => {
      expect(isKeyPseudonym(keyPseudonym('7', secret))).toBe(true);
      expect(isKeyPseudonym('7')).toBe(false);
      expect(isKeyPseudonym(null)).toBe(false);
    });
  });

  describe(unsealKey.name, () => {
    it('opens what sealKey sealed for the same pseudonym', () => {
      const pseudonym = keyPseudonym('author-42', secret);
      expect(unsealKey(sealKey('author-42', pseudonym, secret), pseudonym, secret)).toBe('author-42');
    });

    // claim: C-52
    it('refuses a seal moved to another pseudonym, tampered with, or cut short', () => {
      const pseudonym = keyPseudonym('author-42', secret);
      const sealed = sealKey('author-42', pseudonym, secret);
      expect(unsealKey(sealed, keyPseudonym('author-43', secret), secret)).toBeUndefined();
      const bytes = Buffer.from(sealed, 'base64url');
      bytes[bytes.length - 20] ^= 1;
      expect(unsealKey(bytes.toString('base64url'), pseudonym, secret)).toBeUndefined();
      expect(unsealKey('AAAA', pseudonym, secret)).toBeUndefined();
    });

    it('refuses a seal whose key does not match the pseudonym (a forged pair)', () => {
      const forged = keyPseudonym('author-43', secret);
      expect(unsealKey(sealKey('author-42', forged, secret), forged, secret)).toBeUndefined();
    });
  });
});
