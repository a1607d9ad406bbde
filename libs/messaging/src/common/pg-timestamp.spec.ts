import { pgTimestamp } from './pg-timestamp';

describe(pgTimestamp.name, () => {
  it('returns a Date as it is', () => {
    const date = new Date('2026-12-05T08:00:00.123Z');
    expect(pgTimestamp(date)).toBe(date);
  });

  it.each([
    ['2026-12-05 08:00:00.123999+00', '2026-12-05T08:00:00.123Z'],
    ['2026-12-05 08:00:00.000001+00', '2026-12-05T08:00:00.000Z'],
    ['2026-12-05 08:00:00+00', '2026-12-05T08:00:00.000Z'],
    ['2026-12-05 08:00:00.5+00', '2026-12-05T08:00:00.500Z'],
    ['2026-12-05 09:30:00.25+01:30', '2026-12-05T08:00:00.250Z'],
    ['2026-12-05 03:00:00-05', '2026-12-05T08:00:00.000Z'],
    ['2026-12-05 08:04:27+00:04:27', '2026-12-05T08:00:00.000Z'],
    ['2026-12-05T08:00:00.123Z', '2026-12-05T08:00:00.123Z'],
    ['1969-12-31 23:59:59.999500+00', '1969-12-31T23:59:59.999Z'],
    ['0099-01-01 00:00:00+00', '0099-01-01T00:00:00.000Z'],
  ])('reads PostgreSQL text %s as %s, truncated to the millisecond as pg does', (text, iso) => {
    expect(pgTimestamp(text).toISOString()).toBe(iso);
  });

  it.each([['yesterday'], ['2026-12-05'], ['infinity'], [42], [null]])('refuses %p', (value) => {
    expect(() => pgTimestamp(value)).toThrow(TypeError);
  });
});
