import { pendingRange, recordsIn, redriveGroupOf } from './partition-ranges';

describe('partition ranges', () => {
  describe(pendingRange.name, () => {
    it('starts at the committed offset of the redrive group', () => {
      expect(pendingRange(0, 0n, 10n, 4n)).toEqual({ partition: 0, from: 4n, to: 10n });
    });

    it('starts at the log start when nothing was committed or retention deleted past the commit', () => {
      expect(pendingRange(1, 3n, 10n, -1n)).toEqual({ partition: 1, from: 3n, to: 10n });
      expect(pendingRange(1, 6n, 10n, 4n)).toEqual({ partition: 1, from: 6n, to: 10n });
    });

    it('is empty when everything was redriven', () => {
      expect(recordsIn([pendingRange(0, 0n, 10n, 10n), pendingRange(1, 0n, 5n, 2n)])).toBe(3);
    });
  });

  describe(redriveGroupOf.name, () => {
    it('names one group per dead-letter topic', () => {
      expect(redriveGroupOf('orders.billing.dlq')).toBe('orders.billing.dlq.redrive');
    });
  });
});
