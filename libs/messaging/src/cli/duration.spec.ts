import { parseDuration } from './duration';

describe(parseDuration.name, () => {
  it.each([
    ['15m', 900_000],
    ['1h', 3_600_000],
    ['90s', 90_000],
    ['500ms', 500],
    ['1.5h', 5_400_000],
    ['10', 600_000],
  ])('reads %s as %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it('rejects what is not a duration', () => {
    for (const text of ['', 'soon', '-5m', '5d']) expect(() => parseDuration(text)).toThrow(/not a duration/);
  });
});
