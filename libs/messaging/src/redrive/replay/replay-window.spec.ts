import { ReplayWindowError } from '../errors/replay-window.error';
import { checkRate, checkWindows, parseOffsetWindows, windowsBetween } from './replay-window';

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
});
