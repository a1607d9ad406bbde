import { growingSince, ReadingWindow, TrendSample } from './reading-window';

const start = Date.parse('2026-12-07T03:00:00Z');
/** A clock that moves only when the test says so. */
function manualClock(at: number) {
  return { now: () => at, advance: (ms: number) => void (at += ms) };
}
const series = (...values: number[]): TrendSample[] =>
  values.map((value, i) => ({ at: start + i * 30_000, value }));

describe(ReadingWindow.name, () => {
  describe('record', () => {
    it('ends with the latest reading: one between steps stands in until the next step', () => {
      const clock = manualClock(start);
      const window = new ReadingWindow(clock, { stepMs: 30_000 });
      window.record([['dlq', 0]]);
      clock.advance(5_000);
      window.record([['dlq', 1]]);
      expect(window.samples('dlq')).toEqual([
        { at: start, value: 0 },
        { at: start + 5_000, value: 1 },
      ]);
      clock.advance(5_000);
      window.record([['dlq', 2]]);
      expect(window.samples('dlq')).toEqual([
        { at: start, value: 0 },
        { at: start + 10_000, value: 2 },
      ]);
    });

    it('keeps one reading per step: the next step replaces a reading in between', () => {
      const clock = manualClock(start);
      const window = new ReadingWindow(clock, { stepMs: 30_000 });
      window.record([['pending', 1]]);
      clock.advance(10_000);
      window.record([['pending', 2]]);
      clock.advance(20_000);
      window.record([['pending', 3]]);
      expect(window.samples('pending')).toEqual([
        { at: start, value: 1 },
        { at: start + 30_000, value: 3 },
      ]);
    });

    it('keeps the last window only, at most windowMs / stepMs + 1 readings a series', () => {
      const clock = manualClock(start);
      const window = new ReadingWindow(clock, { windowMs: 60 * 60_000, stepMs: 30_000 });
      for (let i = 0; i < 300; i++) {
        window.record([['pending', i]]);
        clock.advance(30_000);
      }
      clock.advance(-30_000);
      const kept = window.samples('pending');
      expect(kept).toHaveLength(121);
      expect(kept[0]).toEqual({ at: clock.now() - 60 * 60_000, value: 179 });
      expect(window.from).toBe(clock.now() - 60 * 60_000);
    });

    it('skips values not known yet, and drops a series with nothing left in the window', () => {
      const clock = manualClock(start);
      const window = new ReadingWindow(clock, { windowMs: 60_000 });
      window.record([
        ['gone', 5],
        ['rate', undefined],
        ['nan', Number.NaN],
      ]);
      expect(window.size).toBe(1);
      clock.advance(61_000);
      expect(window.samples('gone')).toEqual([]);
      window.record([['other', 1]]);
      expect(window.size).toBe(1);
    });

    it('records no series past maxSeries', () => {
      const window = new ReadingWindow(manualClock(start), { maxSeries: 2 });
      window.record([
        ['a', 1],
        ['b', 1],
        ['c', 1],
      ]);
      expect([window.size, window.samples('c')]).toEqual([2, []]);
    });
  });
});

describe(growingSince.name, () => {
  it('is the start of a rise over the last readings, pauses included, the flat stretch before it not', () => {
    expect(growingSince(series(7, 5, 5, 5, 6, 8, 8, 9, 10, 12, 15), 4)).toBe(start + 3 * 30_000);
  });

  it('is undefined while the last readings did not all rise', () => {
    expect(growingSince(series(1, 2, 3, 4, 5, 5), 4)).toBeUndefined();
    expect(growingSince(series(1, 2, 3, 4, 3, 4), 4)).toBeUndefined();
  });

  it('needs more readings than rises', () => {
    expect(growingSince(series(1, 2, 3, 4), 4)).toBeUndefined();
    expect(growingSince(series(1, 2, 3, 4, 5), 4)).toBe(start);
    expect(growingSince([], 4)).toBeUndefined();
  });

  it('is undefined for a flat or falling series', () => {
    expect(growingSince(series(3, 3, 3, 3, 3, 3), 4)).toBeUndefined();
    expect(growingSince(series(9, 8, 7, 6, 5), 4)).toBeUndefined();
  });
});
