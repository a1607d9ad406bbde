import * as fc from 'fast-check';
import { fromPostgresJson, fromPostgresText, toPostgresJson, toPostgresText } from './postgres-text';

describe('postgres-text', () => {
  describe(toPostgresText.name, () => {
    it('writes each NUL as \\u{0}, a backslash that starts \\u{ as \\u{5c}, and nothing else differently', () => {
      expect(toPostgresText('a\u0000b')).toBe('a\\u{0}b');
      expect(toPostgresText('a\\u{0}b')).toBe('a\\u{5c}u{0}b');
      expect(toPostgresText('tab\there \\n \\u0000 ü')).toBe('tab\there \\n \\u0000 ü');
    });

    it('is read back exactly by fromPostgresText, and never holds a NUL', () => {
      const alphabet = fc.constantFrom('\u0000', '\\', 'u', '{', '}', '0', '5', 'c', 'x');
      fc.assert(
        fc.property(
          fc.array(alphabet).map((cs) => cs.join('')),
          (text) => {
            const stored = toPostgresText(text);
            expect(stored).not.toContain('\u0000');
            expect(fromPostgresText(stored)).toBe(text);
          },
        ),
      );
    });
  });

  describe(toPostgresJson.name, () => {
    it('gives JSON without \\u0000 that fromPostgresJson reads back exactly, keys too', () => {
      const value = { id: 'a\u0000b', ids: ['\u0000', null, 1, 'x\\u{0}'], 'k\u0000': { at: 'y' } };
      const json = toPostgresJson(value);
      expect(json).not.toContain('\\u0000');
      expect(fromPostgresJson(JSON.parse(json))).toEqual(value);
    });
  });
});
