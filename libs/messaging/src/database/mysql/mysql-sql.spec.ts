import { idList, parseUtc, utcDatetime } from './mysql-sql';

describe('mysql-sql', () => {
  describe(utcDatetime.name, () => {
    it('writes the instant in UTC, whatever the process time zone', () => {
      expect(utcDatetime(new Date('2026-03-29T01:30:00.123+02:00'))).toBe('2026-03-28 23:30:00.123');
    });
  });

  describe(parseUtc.name, () => {
    it('reads what DATE_FORMAT(…, UTC_ISO) renders, microseconds included', () => {
      expect(parseUtc('2026-12-01T10:26:12.930011Z').toISOString()).toBe('2026-12-01T10:26:12.930Z');
    });
  });

  describe(idList.name, () => {
    it('inlines ids as numbers', () => {
      expect(idList(['1', '42', '9007199254740993'])).toBe('1, 42, 9007199254740993');
    });

    it.each(['', '1 or 1=1', '-1', '1.5', '0x10'])('refuses %p', (id) => {
      expect(() => idList(['1', id])).toThrow(TypeError);
    });
  });
});
