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
});
