import { MessageHeaders } from '../envelope/message-headers';
import { describeRecord, fingerprintOf } from './dead-letter-record';

const wire = {
  destination: 'orders.billing.dlq',
  key: 'sha256:0123',
  headers: {
    [MessageHeaders.ID]: '0190a1b2-0000-7000-8000-000000000001',
    [MessageHeaders.TYPE]: 'OrderPlaced',
    [MessageHeaders.FAILURE_CATEGORY]: 'VALIDATION',
    [MessageHeaders.FAILURE_CODE]: 'SCHEMA_MISMATCH',
    [MessageHeaders.ORIGIN_DESTINATION]: 'orders',
    [MessageHeaders.RETRY_ATTEMPT]: '2',
    [MessageHeaders.LAST_FAILURE_AT]: '2026-01-01T09:01:00.000Z',
    [MessageHeaders.REDRIVE_ID]: 'r-1',
    'msg.redrive-count': '1',
  },
  body: Buffer.from('{"secret":"payload"}'),
};

describe('dead-letter records', () => {
  describe(fingerprintOf.name, () => {
    it('changes with the body, the key or any header, not with the order of headers', () => {
      const reordered = { ...wire, headers: Object.fromEntries(Object.entries(wire.headers).reverse()) };
      expect(fingerprintOf(reordered)).toBe(fingerprintOf(wire));
      expect(fingerprintOf({ ...wire, body: Buffer.from('{}') })).not.toBe(fingerprintOf(wire));
      expect(fingerprintOf({ ...wire, key: null })).not.toBe(fingerprintOf(wire));
      expect(fingerprintOf({ ...wire, headers: { ...wire.headers, x: '1' } })).not.toBe(fingerprintOf(wire));
    });

    it('covers what the message is, not how often the broker delivered it (quorum queues count every read)', () => {
      const read = {
        ...wire,
        headers: {
          ...wire.headers,
          'x-delivery-count': '7',
          'x-acquired-count': '9',
          'x-death': '[{"count":1}]',
          'x-first-death-queue': 'orders.billing',
          'x-last-death-reason': 'expired',
        },
      };
      expect(fingerprintOf(read)).toBe(fingerprintOf(wire));
      expect(fingerprintOf({ ...read, headers: { ...read.headers, 'x-tenant': 'a' } })).not.toBe(
        fingerprintOf(wire),
      );
    });
  });

  describe(describeRecord.name, () => {
    it('shows the reserved headers and the redrive history, never the payload', () => {
      const planned = describeRecord({ position: { kind: 'queue', index: 0 }, wire });
      expect(planned).toEqual({
        position: { kind: 'queue', index: 0 },
        messageId: '0190a1b2-0000-7000-8000-000000000001',
        type: 'OrderPlaced',
        failureCategory: 'VALIDATION',
        failureCode: 'SCHEMA_MISMATCH',
        attempts: 2,
        originDestination: 'orders',
        lastFailureAt: '2026-01-01T09:01:00.000Z',
        redriveCount: 1,
        previousRedriveIds: ['r-1'],
        fingerprint: fingerprintOf(wire),
      });
      expect(JSON.stringify(planned)).not.toContain('payload');
    });

    it('shows nulls for a message that failed decoding', () => {
      const planned = describeRecord({
        position: { kind: 'queue', index: 3 },
        wire: { ...wire, headers: {} },
      });
      expect(planned).toMatchObject({ messageId: null, type: null, attempts: null, redriveCount: 0 });
    });
  });
});
