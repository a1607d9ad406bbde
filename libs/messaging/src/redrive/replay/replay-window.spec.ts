import { ReplayWindowError } from '../errors/replay-window.error';
import {
  checkRate,
  checkWindows,
  journalWindowByTime,
  parseOffsetWindows,
  windowsBetween,
} from './replay-window';

const marks = [
  { partition: 0, low: '0', high: '100' },
  { partition: 1, low: '10', high: '50' },
];

describe('replay window', () => {
  it('parses offsets per partition, the end exclusive, and refuses a partition named twice or a bad form', () => {
    expect(parseOffsetWindows('0:5-10, 1:10-12')).toEqual([
      { partition: 0, from: '5', to: '10' },
      { partition: 1, from: '10', to: '12' },
    ]);
    expect(() => parseOffsetWindows('0:5-10,0:20-30')).toThrow(ReplayWindowError);
    expect(() => parseOffsetWindows('0:5')).toThrow(/<partition>:<from>-<to>/);
    expect(() => parseOffsetWindows('a:1-2')).toThrow(ReplayWindowError);
  });

  it('takes the offsets two time lookups gave as [from, to), leaving out empty partitions', () => {
    const atFrom = [
      { partition: 1, offset: '7' },
      { partition: 0, offset: '3' },
      { partition: 2, offset: '9' },
    ];
    const atTo = [
      { partition: 0, offset: '8' },
      { partition: 1, offset: '7' },
      { partition: 2, offset: '12' },
    ];
    expect(windowsBetween(atFrom, atTo)).toEqual([
      { partition: 0, from: '3', to: '8' },
      { partition: 2, from: '9', to: '12' },
    ]);
  });

  it('counts the offsets of the windows within what the log keeps', () => {
    const windows = [
      { partition: 1, from: '10', to: '50' },
      { partition: 0, from: '0', to: '3' },
      { partition: 0 + 0, from: '3', to: '3' },
    ];
    expect(checkWindows('orders', windows.slice(0, 2), marks)).toEqual({
      partitions: [
        { partition: 0, from: '0', to: '3' },
        { partition: 1, from: '10', to: '50' },
      ],
      records: 43,
    });
    expect(checkWindows('orders', [windows[2]], marks)).toEqual({ partitions: [], records: 0 });
  });

  it('refuses a window before the log start, past its end, reversed, or on a partition the topic lacks', () => {
    const refused =
      (from: string, to: string, partition = 1) =>
      () =>
        checkWindows('orders', [{ partition, from, to }], marks);
    expect(refused('9', '20')).toThrow(/keeps offsets from 10/);
    expect(refused('10', '51')).toThrow(/ends at 50/);
    expect(refused('20', '19')).toThrow(/is after/);
    expect(refused('0', '1', 2)).toThrow(/no partition 2/);
  });

  it('refuses more than 100,000 offsets', () => {
    const wide = [{ partition: 0, low: '0', high: '200000' }];
    expect(() => checkWindows('orders', [{ partition: 0, from: '0', to: '100001' }], wide)).toThrow(
      /more than 100000/,
    );
    expect(checkWindows('orders', [{ partition: 0, from: '0', to: '100000' }], wide).records).toBe(100_000);
  });

  it('takes a rate from 1 to 10,000 per second, whole', () => {
    expect(checkRate(1)).toBe(1);
    expect(checkRate(10_000)).toBe(10_000);
    for (const bad of [0, -1, 1.5, 10_001, Number.NaN])
      expect(() => checkRate(bad)).toThrow(ReplayWindowError);
  });

  describe('a RabbitMQ journal window by time', () => {
    const s = (second: number) => second * 1000;
    const at = (second: number) => new Date(s(second));
    // Offsets 10..15 at seconds 100, 100, 101, (none), 102, 103; offset 16 is the end.
    const scanned = [
      { offset: 10, time: s(100) },
      { offset: 11, time: s(100) },
      { offset: 12, time: s(101) },
      { offset: 13, time: undefined },
      { offset: 14, time: s(102) },
      { offset: 15, time: s(103) },
    ];
    const mark = { partition: 0, low: '10', high: '16', firstTime: s(100) };
    const window = (from: number, to: number) =>
      journalWindowByTime('o:journal', { from: at(from), to: at(to) }, mark, scanned);

    it('runs from the first message at or after the start to the first at or after the end', () => {
      expect(window(101, 103)).toEqual([{ partition: 0, from: '12', to: '15' }]);
      expect(window(100, 101)).toEqual([{ partition: 0, from: '10', to: '12' }]);
      // A message without a time bounds nothing: it lies wherever its offset is.
      expect(window(101, 102)).toEqual([{ partition: 0, from: '12', to: '14' }]);
    });

    it("ends at the journal's end when nothing is at or after the end, and is empty when nothing is in it", () => {
      expect(window(102, 200)).toEqual([{ partition: 0, from: '14', to: '16' }]);
      expect(window(150, 200)).toEqual([]);
      expect(window(100.2, 100.9)).toEqual([]);
    });

    it('refuses a window that starts before its first message, and an empty journal', () => {
      expect(() => window(99, 101)).toThrow(/keeps messages from 1970-01-01T00:01:40.000Z only/);
      expect(() =>
        journalWindowByTime('o:journal', { from: at(1), to: at(2) }, { ...mark, low: '16' }, []),
      ).toThrow(/holds no message/);
    });

    it('ignores what the scan met beyond what the journal keeps', () => {
      const beyond = [...scanned, { offset: 16, time: s(104) }];
      expect(journalWindowByTime('o:journal', { from: at(103), to: at(105) }, mark, beyond)).toEqual([
        { partition: 0, from: '15', to: '16' },
      ]);
    });
  });
});
