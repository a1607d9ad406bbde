import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

/** scrypt cost parameters of new hashes (N = 2^15: about 32 MiB and a few tens of ms per check). */
const COST = { N: 32_768, r: 8, p: 1 };
const KEY_LENGTH = 32;
const FORMAT = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

/** Hashes a password: `scrypt$N$r$p$<salt, base64url>$<hash, base64url>` (what `CONSOLE_USERS` holds). */
export async function hashPassword(password: string): Promise<string> {
  if (password.length < 8) throw new Error('A console password has at least 8 characters.');
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, KEY_LENGTH, { ...COST, maxmem: 64 * 1024 * 1024 });
  return `scrypt$${COST.N}$${COST.r}$${COST.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

/** True when `hash` (as `hashPassword` writes it) is one of a valid form. */
export function isPasswordHash(hash: string): boolean {
  return FORMAT.test(hash);
}

/** True when `password` matches `hash`; compared in constant time. */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  const match = FORMAT.exec(hash);
  if (!match) return false;
  const [, n, r, p, salt, expected] = match;
  const want = Buffer.from(expected, 'base64url');
  const cost = { N: Number(n), r: Number(r), p: Number(p), maxmem: 64 * 1024 * 1024 };
  const got = await scryptAsync(password, Buffer.from(salt, 'base64url'), want.length, cost);
  return got.length === want.length && timingSafeEqual(got, want);
}
