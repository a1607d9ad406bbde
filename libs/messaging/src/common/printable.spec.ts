import { hasUnprintable, printable, printableLines } from './printable';

describe('printable', () => {
  describe(printable.name, () => {
    it('escapes control characters: C0, DEL, C1', () => {
      expect(printable('a\u001b[2Jb\u0007c\u007fd\u009be')).toBe('a\\u{1b}[2Jb\\u{7}c\\u{7f}d\\u{9b}e');
    });

    it('escapes bidirectional controls, which reorder what the eye reads', () => {
      // "orders.billing" with a right-to-left override: shown as "gnillib.sredro", read by the broker as is.
      for (const c of [
        '\u202a',
        '\u202b',
        '\u202c',
        '\u202d',
        '\u202e',
        '\u2066',
        '\u2067',
        '\u2068',
        '\u2069',
      ]) {
        expect(printable(`x${c}y`)).toBe(`x\\u{${c.codePointAt(0)!.toString(16)}}y`);
      }
      expect(printable('\u200e\u200f\u061c')).toBe('\\u{200e}\\u{200f}\\u{61c}');
    });

    it('escapes zero-width and other invisible characters, which make two names look alike', () => {
      const invisible = ['\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad', '\u2028', '\u2029'];
      for (const c of invisible) expect(hasUnprintable(`jane${c}.doe`)).toBe(true);
      expect(printable('jane\u200b.doe')).toBe('jane\\u{200b}.doe');
      expect(printable('tag\u{e0041}')).toBe('tag\\u{e0041}');
    });

    it('leaves printable text alone, letters of every script included', () => {
      for (const text of ['orders.billing.dlq', 'Jürgen Ωmega 東京', 'a-b_c@d', '']) {
        expect(printable(text)).toBe(text);
        expect(hasUnprintable(text)).toBe(false);
      }
    });
  });

  describe('printableLines', () => {
    it('keeps line breaks between lines and escapes everything else', () => {
      expect(printableLines('one\ntwo\u001b[1A\r\n')).toBe('one\ntwo\\u{1b}[1A\\u{d}\n');
    });
  });
});
