import { hkdfSync } from 'node:crypto';
import { InvalidKeySecretError } from './invalid-key-secret.error';

/** The fewest random bytes a key secret may have. */
export const MIN_KEY_SECRET_BYTES = 32;

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * The deployment secret dead-letter copies are keyed with, as two independent subkeys: one for the key's
 * pseudonym (HMAC-SHA256), one for sealing the key (AES-256-GCM) so that only a redrive holding the same
 * secret can put it back. Services that dead-letter and the redrive CLI share it; nothing else does.
 */
export interface KeySecret {
  /** 32-byte HMAC-SHA256 key of the key's pseudonym (`hmac:…`), derived from the secret with HKDF. */
  readonly pseudonymKey: Buffer;
  /** 32-byte AES-256-GCM key that seals the real key in `msg.sealed-key`, derived from the secret with HKDF. */
  readonly sealKey: Buffer;
}

/**
 * Reads a key secret written in base64 (`openssl rand -base64 32`). Refuses anything that does not decode
 * to at least 32 bytes: a short or guessable secret would let a DLQ reader enumerate short keys again.
 */
export function parseKeySecret(text: string, origin: string): KeySecret {
  const trimmed = text.trim();
  const bytes = BASE64.test(trimmed) ? Buffer.from(trimmed, 'base64') : Buffer.alloc(0);
  if (bytes.length < MIN_KEY_SECRET_BYTES) throw new InvalidKeySecretError(origin, MIN_KEY_SECRET_BYTES);
  return {
    pseudonymKey: subkey(bytes, 'key-pseudonym'),
    sealKey: subkey(bytes, 'key-seal'),
  };
}

function subkey(secret: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), `nest-reliable-messaging/${purpose}`, 32));
}
