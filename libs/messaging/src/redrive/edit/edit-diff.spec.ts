import { diffHashOf, headerDiff, payloadDiff, wholePayloadDiff } from './edit-diff';

describe('edit diff', () => {
  describe(payloadDiff.name, () => {
    it('lists changed, added and removed values by JSON pointer', () => {
      const before = { title: 'Helo', tags: ['a', 'b'], meta: { 'a/b': 1, gone: true } };
      const after = { title: 'Hello', tags: ['a'], meta: { 'a/b': 2 }, extra: null };
      expect(payloadDiff(before, after)).toEqual([
        { path: '/extra', op: 'add', after: 'null' },
        { path: '/meta/a~1b', op: 'replace', before: '1', after: '2' },
        { path: '/meta/gone', op: 'remove', before: 'true' },
        { path: '/tags/1', op: 'remove', before: '"b"' },
        { path: '/title', op: 'replace', before: '"Helo"', after: '"Hello"' },
      ]);
    });

    it('is empty for equal values, whatever the key order', () => {
      expect(payloadDiff({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toEqual([]);
    });

    it('replaces a whole value whose kind changes', () => {
      expect(payloadDiff({ a: [1] }, { a: { 0: 1 } })).toEqual([
        { path: '/a', op: 'replace', before: '[1]', after: '{"0":1}' },
      ]);
    });
  });

  describe(wholePayloadDiff.name, () => {
    it('replaces a payload that was not JSON as a whole', () => {
      expect(wholePayloadDiff('not json', { a: 1 })).toEqual([
        { path: '', op: 'replace', before: '"not json"', after: '{"a":1}' },
      ]);
    });
  });

  describe(headerDiff.name, () => {
    it('compares with the original headers, without case; no-op changes are left out', () => {
      expect(
        headerDiff({ Tenant: 'a', priority: 'low' }, { tenant: 'b', priority: 'low', x: null, y: '1' }),
      ).toEqual([
        { path: 'header:tenant', op: 'replace', before: 'a', after: 'b' },
        { path: 'header:y', op: 'add', after: '1' },
      ]);
    });
  });

  describe(diffHashOf.name, () => {
    it('binds the diff to its message: another id, fingerprint or change gives another hash', () => {
      const diff = [{ path: '/a', op: 'replace' as const, before: '1', after: '2' }];
      const hash = diffHashOf('m1', 'sha256:f', diff);
      expect(hash).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(diffHashOf('m1', 'sha256:f', diff)).toBe(hash);
      expect(diffHashOf('m2', 'sha256:f', diff)).not.toBe(hash);
      expect(diffHashOf('m1', 'sha256:g', diff)).not.toBe(hash);
      expect(diffHashOf('m1', 'sha256:f', [{ ...diff[0], after: '3' }])).not.toBe(hash);
    });
  });
});
