import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { MessageHeaders } from './message-headers';
import { WireMessage } from './wire-message';

/** The fewest random bytes `tenants.signingSecret` may decode to. */
export const MIN_TENANT_SECRET_BYTES = 32;

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * The 32-byte HMAC key of tenant signatures, derived with HKDF from `tenants.signingSecret` (base64 of at least
 * 32 random bytes); undefined when the text is not that.
 */
export function tenantSigningKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  const bytes = BASE64.test(trimmed) ? Buffer.from(trimmed, 'base64') : Buffer.alloc(0);
  if (bytes.length < MIN_TENANT_SECRET_BYTES) return undefined;
  return Buffer.from(hkdfSync('sha256', bytes, Buffer.alloc(0), 'nest-reliable-messaging/tenant', 32));
}

/**
 * The signature that binds a message to its tenant: HMAC-SHA256 over the tenant, the message id and the
 * SHA-256 of the body, hex. Changing any of them (another tenant's name in `msg.tenant`, a signature copied
 * from another message, another body under a signed id) breaks it.
 */
export function tenantSignature(key: Buffer, tenant: string, messageId: string, body: Buffer): string {
  const bodyHash = createHash('sha256').update(body).digest('hex');
  return createHmac('sha256', key).update(`v1\n${tenant}\n${messageId}\n${bodyHash}`).digest('hex');
}

/** The message with its tenant stamped and signed (the relay's, for a row read from `tenant`'s outbox). */
export function stampTenant(key: Buffer, tenant: string, wire: WireMessage): WireMessage {
  const messageId = wire.headers[MessageHeaders.ID] ?? '';
  return {
    ...wire,
    headers: {
      ...wire.headers,
      [MessageHeaders.TENANT]: tenant,
      [MessageHeaders.TENANT_SIGNATURE]: tenantSignature(key, tenant, messageId, wire.body),
    },
  };
}

/** What a consumer reads of a message's tenant. */
export type TenantClaim =
  | { readonly kind: 'none' }
  | { readonly kind: 'forged'; readonly tenant: string }
  | { readonly kind: 'signed'; readonly tenant: string };

/**
 * The tenant a message names, and whether its signature holds under `key`: `none` (no tenant header),
 * `forged` (no signature, or one that does not match tenant, id and body), `signed`.
 */
export function readTenant(key: Buffer, wire: WireMessage): TenantClaim {
  const tenant = wire.headers[MessageHeaders.TENANT];
  if (tenant === undefined) return { kind: 'none' };
  const given = wire.headers[MessageHeaders.TENANT_SIGNATURE] ?? '';
  const expected = tenantSignature(key, tenant, wire.headers[MessageHeaders.ID] ?? '', wire.body);
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b)
    ? { kind: 'signed', tenant }
    : { kind: 'forged', tenant };
}
