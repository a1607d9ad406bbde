import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { KeySecret } from './key-secret';

const PSEUDONYM_PREFIX = 'hmac:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * A stable stand-in for a message key in a dead-letter copy: HMAC-SHA256 under the deployment's secret, so
 * it still groups one key's messages but cannot be reversed by hashing candidate keys (a plain SHA-256 of
 * an author id can).
 */
export function keyPseudonym(key: string, secret: KeySecret): string {
  const mac = createHmac('sha256', secret.pseudonymKey).update(key, 'utf8').digest('hex');
  return `${PSEUDONYM_PREFIX}${mac.slice(0, 32)}`;
}

/** True when `key` looks like a pseudonym this library wrote (a redrive must restore the real key). */
export function isKeyPseudonym(key: string | null): boolean {
  return key !== null && (key.startsWith(PSEUDONYM_PREFIX) || key.startsWith('sha256:'));
}

/**
 * The real key, encrypted (AES-256-GCM) under the secret and bound to its pseudonym: what lets a redrive put
 * a message back on its own key's partition, and the handler see its real key, without the DLQ showing it.
 */
export function sealKey(key: string, pseudonym: string, secret: KeySecret): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', secret.sealKey, iv);
  cipher.setAAD(Buffer.from(pseudonym, 'utf8'));
  const sealed = Buffer.concat([cipher.update(key, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url');
}

/**
 * The key sealed in `sealed`, if it opens under `secret` and its pseudonym is `pseudonym`; undefined for a
 * seal made with another secret, for another pseudonym, or tampered with.
 */
export function unsealKey(sealed: string, pseudonym: string, secret: KeySecret): string | undefined {
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length < IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', secret.sealKey, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(pseudonym, 'utf8'));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    const key = Buffer.concat([
      decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
    const expected = Buffer.from(keyPseudonym(key, secret));
    const given = Buffer.from(pseudonym);
    return expected.length === given.length && timingSafeEqual(expected, given) ? key : undefined;
  } catch {
    return undefined;
  }
}
