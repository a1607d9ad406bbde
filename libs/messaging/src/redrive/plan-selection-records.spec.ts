import { MessageHeaders } from '../envelope/message-headers';
import { DeadLetterRecord } from './dead-letter-record';
import { isSelected, selectRecords, SelectionContext } from './plan-selection-records';
import { describeRecord } from './dead-letter-record';

const NOW = Date.parse('2026-01-01T10:00:00.000Z');

function record(
  index: number,
  headers: Record<string, string> = {},
  position: DeadLetterRecord['position'] = { kind: 'queue', index },
): DeadLetterRecord {
  return {
    position,
    wire: {
      destination: 'orders.billing.dlq',
      key: null,
      headers: {
        [MessageHeaders.ID]: `m${index}`,
        [MessageHeaders.TYPE]: 'OrderPlaced',
        [MessageHeaders.FAILURE_CATEGORY]: 'TRANSIENT',
        [MessageHeaders.FAILURE_CODE]: index % 2 === 0 ? 'QueryFailedError/42501' : 'Error/ECONNRESET',
        [MessageHeaders.ORIGIN_DESTINATION]: 'orders',
        [MessageHeaders.LAST_FAILURE_AT]: new Date(NOW - index * 60_000).toISOString(),
        ...headers,
      },
      body: Buffer.from('{}'),
    },
  };
}

const context = (overrides: Partial<SelectionContext> = {}): SelectionContext => ({
  transport: 'rabbitmq',
  source: 'orders.billing.dlq',
  route: { origin: 'orders', group: 'billing', target: 'orders.billing' },
  action: 'redrive',
  now: NOW,
  limit: 100,
  ...overrides,
});

const ids = (records: readonly DeadLetterRecord[]) => records.map((r) => r.wire.headers[MessageHeaders.ID]);

describe('plan selections', () => {
  describe(isSelected.name, () => {
    it('takes by id, by each filter field, and by age of the last failure', () => {
      const m = describeRecord(record(4));
      expect(isSelected({ by: 'ids', messageIds: ['m4'] }, m, NOW)).toBe(true);
      expect(isSelected({ by: 'ids', messageIds: ['m3'] }, m, NOW)).toBe(false);
      expect(
        isSelected({ by: 'filter', code: 'QueryFailedError/42501', category: 'TRANSIENT' }, m, NOW),
      ).toBe(true);
      expect(isSelected({ by: 'filter', type: 'Other' }, m, NOW)).toBe(false);
      expect(isSelected({ by: 'filter', olderThanMinutes: 4 }, m, NOW)).toBe(true);
      expect(isSelected({ by: 'filter', olderThanMinutes: 5 }, m, NOW)).toBe(false);
    });
  });

  describe(selectRecords.name, () => {
    it('takes the group wherever it lies, up to the limit', () => {
      const records = Array.from({ length: 10 }, (_, i) => record(i));
      const { taken, skipped, kept } = selectRecords(
        records,
        { by: 'filter', code: 'QueryFailedError/42501' },
        context({ limit: 3 }),
      );
      expect(ids(taken)).toEqual(['m0', 'm2', 'm4']);
      expect(skipped).toEqual([]);
      expect(kept).toEqual([]); // RabbitMQ leaves the others where they are
    });

    it('skips a selected message whose origin is refused, with the reason, and takes the rest', () => {
      const records = [record(0), record(2, { [MessageHeaders.ORIGIN_DESTINATION]: 'payments' }), record(4)];
      const { taken, skipped } = selectRecords(
        records,
        { by: 'filter', code: 'QueryFailedError/42501' },
        context(),
      );
      expect(ids(taken)).toEqual(['m0', 'm4']);
      expect(skipped.map((s) => s.message.messageId)).toEqual(['m2']);
      expect(skipped[0].reason).toContain("msg.origin-destination is not 'orders'");
    });

    it('skips a message whose key cannot be restored (no key secret)', () => {
      const sealed = { ...record(0) };
      const withPseudonym = { ...sealed, wire: { ...sealed.wire, key: 'hmac:0123' } };
      const { taken, skipped } = selectRecords([withPseudonym], { by: 'ids', messageIds: ['m0'] }, context());
      expect(taken).toEqual([]);
      expect(skipped[0].reason).toContain('no key secret');
    });

    it('names the picked ids that no record read has, in the order picked, and takes the others', () => {
      const records = Array.from({ length: 5 }, (_, i) => record(i));
      const picked = { by: 'ids' as const, messageIds: ['m9', 'm3', 'gone', 'm1'] };
      const { taken, notFound } = selectRecords(records, picked, context());
      expect(ids(taken)).toEqual(['m1', 'm3']);
      expect(notFound).toEqual(['m9', 'gone']);
      // Found but past the limit is not "not found"; a filter names nothing.
      expect(selectRecords(records, picked, context({ limit: 1 })).notFound).toEqual(['m9', 'gone']);
      expect(selectRecords(records, { by: 'filter', type: 'Other' }, context()).notFound).toEqual([]);
    });

    it('discards any message, a refused origin too', () => {
      const records = [record(0, { [MessageHeaders.ORIGIN_DESTINATION]: 'payments' })];
      const { taken, skipped } = selectRecords(
        records,
        { by: 'ids', messageIds: ['m0'] },
        context({ action: 'discard' }),
      );
      expect(ids(taken)).toEqual(['m0']);
      expect(skipped).toEqual([]);
    });

    it('on Kafka keeps the records before the last taken one of each partition, and only those', () => {
      const at = (partition: number, offset: number) =>
        record(partition * 10 + offset, {}, { kind: 'partition', partition, offset: String(offset) });
      // Partition 0: m0 m1 m2 m3 (m0, m2 taken: m1 kept, m3 after the last: not kept); partition 1: m11 only.
      const records = [at(0, 0), at(0, 1), at(0, 2), at(0, 3), at(1, 1)];
      const { taken, kept } = selectRecords(
        records,
        { by: 'filter', code: 'QueryFailedError/42501' },
        context({ transport: 'kafka' }),
      );
      expect(ids(taken)).toEqual(['m0', 'm2']);
      expect(kept.map((m) => m.messageId)).toEqual(['m1']);
    });
  });
});
