import { encodeEnvelope } from '../envelope/envelope-codec';
import { MessageHeaders } from '../envelope/message-headers';
import { newMessageId } from '../envelope/message-id';
import { WireMessage } from '../envelope/wire-message';
import { readTenant, stampTenant, tenantSigningKey } from './tenant-signature';

const KEY = tenantSigningKey(Buffer.alloc(32, 1).toString('base64'))!;
const OTHER_KEY = tenantSigningKey(Buffer.alloc(32, 2).toString('base64'))!;

function message(text: string): WireMessage {
  return encodeEnvelope(
    {
      messageId: newMessageId(),
      type: 'T',
      destination: 'd',
      key: 'k',
      occurredAt: new Date(0),
      headers: {},
    },
    JSON.stringify({ text }),
  );
}

describe('tenant signatures', () => {
  describe(tenantSigningKey.name, () => {
    it('refuses a secret shorter than 32 bytes or not base64', () => {
      expect(tenantSigningKey(Buffer.alloc(31).toString('base64'))).toBeUndefined();
      expect(tenantSigningKey('not base64 at all!')).toBeUndefined();
      expect(tenantSigningKey(Buffer.alloc(32).toString('base64'))).toHaveLength(32);
    });
  });

  describe(readTenant.name, () => {
    it('reads a tenant the relay stamped', () => {
      expect(readTenant(KEY, stampTenant(KEY, 'acme', message('a')))).toEqual({
        kind: 'signed',
        tenant: 'acme',
      });
    });

    it('says none when the message names no tenant', () => {
      expect(readTenant(KEY, message('a'))).toEqual({ kind: 'none' });
    });

    it.each([
      [
        'no signature',
        (m: WireMessage) => ({ ...m, headers: { ...m.headers, [MessageHeaders.TENANT]: 'acme' } }),
      ],
      ['a signature under another key', () => stampTenant(OTHER_KEY, 'acme', message('a'))],
      [
        'the tenant rewritten after signing',
        (m: WireMessage) => {
          const signed = stampTenant(KEY, 'globex', m);
          return { ...signed, headers: { ...signed.headers, [MessageHeaders.TENANT]: 'acme' } };
        },
      ],
      [
        "another message's signature",
        (m: WireMessage) => {
          const other = stampTenant(KEY, 'acme', message('b'));
          const signature = other.headers[MessageHeaders.TENANT_SIGNATURE];
          return {
            ...m,
            headers: {
              ...m.headers,
              [MessageHeaders.TENANT]: 'acme',
              [MessageHeaders.TENANT_SIGNATURE]: signature,
            },
          };
        },
      ],
      [
        'another body under the signed id',
        (m: WireMessage) => ({ ...stampTenant(KEY, 'acme', m), body: Buffer.from('{}') }),
      ],
    ])('says forged for %s', (_label, forge) => {
      expect(readTenant(KEY, forge(message('a')))).toEqual({ kind: 'forged', tenant: 'acme' });
    });
  });
});
