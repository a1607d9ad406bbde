import fc from 'fast-check';
import { OffsetTracker } from './offset-tracker';

describe(OffsetTracker.name, () => {
  describe('committable', () => {
    it('is undefined until the first offset handed out is settled', () => {
      const tracker = new OffsetTracker();
      ['5', '6', '7'].forEach((o) => tracker.dispatch(o));
      tracker.settle('6');
      tracker.settle('7');
      expect(tracker.committable()).toBeUndefined();
    });

    it('ends at the last settled offset of the contiguous run, never past an unfinished one', () => {
      const tracker = new OffsetTracker();
      ['5', '6', '9', '12'].forEach((o) => tracker.dispatch(o));
      tracker.settle('5');
      tracker.settle('9');
      tracker.settle('12');
      expect(tracker.committable()).toBe('5');
      tracker.settle('6');
      expect(tracker.committable()).toBe('12');
    });
  });

  describe('firstUnsettled', () => {
    it('names where the partition must resume', () => {
      const tracker = new OffsetTracker();
      ['1', '2', '3'].forEach((o) => tracker.dispatch(o));
      tracker.settle('1');
      tracker.settle('3');
      expect(tracker.firstUnsettled()).toBe('2');
      tracker.settle('2');
      expect(tracker.firstUnsettled()).toBeUndefined();
    });
  });

  describe('properties', () => {
    // claim: C-29
    it('never commits past an unsettled offset, whatever order messages settle in, and only moves forward', () => {
      const batches = fc
        .uniqueArray(fc.bigInt({ min: 0n, max: 10_000n }), { minLength: 1, maxLength: 30 })
        .map((offsets) => offsets.sort((a, b) => (a < b ? -1 : 1)).map(String))
        .chain((offsets) =>
          fc.record({
            offsets: fc.constant(offsets),
            // The ones that settle, in the order they do (lanes finish in any order).
            settling: fc.shuffledSubarray(offsets),
          }),
        );
      fc.assert(
        fc.property(batches, ({ offsets, settling }) => {
          const tracker = new OffsetTracker();
          offsets.forEach((offset) => tracker.dispatch(offset));
          const settled = new Set<string>();
          let before = -1;
          for (const offset of settling) {
            tracker.settle(offset);
            settled.add(offset);
            const prefix = offsets.findIndex((o) => !settled.has(o));
            const upTo = prefix === -1 ? offsets.length - 1 : prefix - 1;
            expect(tracker.committable()).toBe(upTo >= 0 ? offsets[upTo] : undefined);
            expect(tracker.firstUnsettled()).toBe(prefix === -1 ? undefined : offsets[prefix]);
            expect(upTo).toBeGreaterThanOrEqual(before);
            before = upTo;
          }
        }),
        { numRuns: 500 },
      );
    });
  });

  describe('over a long run', () => {
    it('keeps the commit point and the resume point across thousands of offsets', () => {
      const tracker = new OffsetTracker();
      for (let o = 0; o < 5_000; o++) tracker.dispatch(String(o));
      for (let o = 0; o < 5_000; o++) if (o !== 3_000) tracker.settle(String(o));
      expect(tracker.committable()).toBe('2999');
      expect(tracker.firstUnsettled()).toBe('3000');
      expect(tracker.unsettled).toBe(2_000);
      tracker.settle('3000');
      expect(tracker.committable()).toBe('4999');
      expect(tracker.firstUnsettled()).toBeUndefined();
      expect(tracker.unsettled).toBe(0);
    });
  });
});
