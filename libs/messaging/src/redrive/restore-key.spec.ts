import { MessageHeaders } from '../envelope/message-headers';
import { WireMessage } from '../envelope/wire-message';
import { deadLetterCopy } from '../failure/failure-copy';
import { parseKeySecret } from '../failure/key-secret';
import { KeyNotRestorableError } from './errors/key-not-restorable.error';
import { restoreKey } from './restore-key';

const secret = parseKeySecret(Buffer.alloc(32, 7).toString('base64'), 'TEST_SECRET');

const original: WireMessage = {
  destination: 'orders',
  key: 'customer-7',
  headers: { [MessageHeaders.ID]: '0190a1b2-0000-7000-8000-000000000001' },
  body: Buffer.from('{}'),
};

describe(restoreKey.name, () => {
  it('opens the sealed key of a copy the library dead-lettered', () => {
    const parked = deadLetterCopy(
      original,
      'orders.billing.dlq',
      {},
      { keySecret: secret, carryHeaders: [] },
    );
    expect(parked.key).not.toBe('customer-7');
    expect(restoreKey(parked, secret)).toBe('customer-7');
    expect(restoreKey({ ...parked, key: null }, secret)).toBeNull();
  });

  it('refuses a plain key: the library never dead-letters one, so another writer of the DLQ did (issue 45 item 8)', () => {
    const planted = { ...original, destination: 'orders.billing.dlq' };
    let error: unknown;
    try {
      restoreKey(planted, secret);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(KeyNotRestorableError);
    expect((error as Error).message).toContain('its key is a plain key');
    expect((error as Error).message).toContain('dlq plan --discard');
    expect((error as Error).message).not.toContain('customer-7');
  });
});
