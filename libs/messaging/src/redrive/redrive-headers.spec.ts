import { MessageHeaders } from '../envelope/message-headers';
import { WireMessage } from '../envelope/wire-message';
import { RedriveHeaders, redriveCopy, redriveCountOf, redriveIdsOf } from './redrive-headers';

const parked: WireMessage = {
  destination: 'orders.billing.dlq',
  key: 'sha256:0123',
  headers: {
    [MessageHeaders.ID]: '0190a1b2-0000-7000-8000-000000000001',
    [MessageHeaders.TYPE]: 'OrderPlaced',
    traceparent: '00-abc-def-01',
    [MessageHeaders.FAILURE_CATEGORY]: 'TRANSIENT',
    [MessageHeaders.FAILURE_CODE]: 'FLAKY',
    [MessageHeaders.ORIGIN_DESTINATION]: 'orders',
    [MessageHeaders.RETRY_ATTEMPT]: '3',
    [MessageHeaders.FIRST_FAILURE_AT]: '2026-01-01T09:00:00.000Z',
    [MessageHeaders.LAST_FAILURE_AT]: '2026-01-01T09:01:00.000Z',
  },
  body: Buffer.from('{"orderId":1}'),
};

const to = { target: 'x', group: 'billing', key: null };

describe('redrive headers', () => {
  describe(redriveCopy.name, () => {
    it('keeps body, message id and the library’s headers under the restored key, drops failure headers and the seal', () => {
      const sealed = { ...parked, headers: { ...parked.headers, [MessageHeaders.SEALED_KEY]: 'sealed' } };
      const copy = redriveCopy(sealed, { target: 'orders.billing', group: 'billing', key: 'c-7' }, 'r-1');
      expect(copy.destination).toBe('orders.billing');
      expect(copy.body).toBe(parked.body);
      expect(copy.key).toBe('c-7');
      expect(copy.headers).toEqual({
        [MessageHeaders.ID]: '0190a1b2-0000-7000-8000-000000000001',
        [MessageHeaders.TYPE]: 'OrderPlaced',
        traceparent: '00-abc-def-01',
        [RedriveHeaders.REDRIVE_ID]: 'r-1',
        [RedriveHeaders.REDRIVE_COUNT]: '1',
        [RedriveHeaders.REDRIVE_GROUP]: 'billing',
      });
    });

    it('passes the headers through the dead-letter allowlist again: what a DLQ writer added stays behind (issue 45 item 8)', () => {
      const planted = {
        ...parked,
        headers: {
          ...parked.headers,
          authorization: 'Bearer planted',
          tenant: 'acme',
          'x-first-death-queue': 'orders.billing',
          'x-delivery-count': '3',
          CC: 'other.queue',
          [RedriveHeaders.REDRIVE_GROUP]: 'shipping',
        },
      };
      const copy = redriveCopy(planted, { ...to, carryHeaders: ['Tenant'] }, 'r-1');
      expect(Object.keys(copy.headers).sort()).toEqual(
        [
          MessageHeaders.ID,
          MessageHeaders.TYPE,
          'traceparent',
          'tenant',
          RedriveHeaders.REDRIVE_ID,
          RedriveHeaders.REDRIVE_COUNT,
          RedriveHeaders.REDRIVE_GROUP,
        ].sort(),
      );
      expect(copy.headers[RedriveHeaders.REDRIVE_GROUP]).toBe('billing');
      // Without the deployment's extra names, only the library's own pass.
      expect(redriveCopy(planted, to, 'r-1').headers.tenant).toBeUndefined();
    });

    it('keeps earlier redrive ids visible and counts every redrive', () => {
      const again = redriveCopy({ ...parked, headers: redriveCopy(parked, to, 'r-1').headers }, to, 'r-2');
      expect(again.headers[RedriveHeaders.REDRIVE_ID]).toBe('r-2');
      expect(again.headers[RedriveHeaders.REDRIVE_HISTORY]).toBe('r-1');
      expect(redriveIdsOf(again.headers)).toEqual(['r-1', 'r-2']);
      expect(redriveCountOf(again.headers)).toBe(2);
    });

    it('keeps the last ten ids while the count goes on', () => {
      let headers = parked.headers;
      for (let i = 1; i <= 12; i++) headers = redriveCopy({ ...parked, headers }, to, `r-${i}`).headers;
      expect(redriveIdsOf(headers)).toEqual([
        'r-3',
        'r-4',
        'r-5',
        'r-6',
        'r-7',
        'r-8',
        'r-9',
        'r-10',
        'r-11',
        'r-12',
      ]);
      expect(redriveCountOf(headers)).toBe(12);
    });
  });

  describe(redriveCountOf.name, () => {
    it('is 0 for a message never redriven', () => {
      expect(redriveCountOf(parked.headers)).toBe(0);
      expect(redriveIdsOf(parked.headers)).toEqual([]);
    });
  });
});
