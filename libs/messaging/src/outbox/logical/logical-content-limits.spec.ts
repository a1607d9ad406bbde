import { JSONB_MAX_BYTES, unparkableContent } from './logical-content-limits';

describe(unparkableContent.name, () => {
  it('takes what jsonb takes, an escaped backslash before u0000 included', () => {
    expect(
      unparkableContent({ payloadJson: JSON.stringify({ a: 'x\\u0000' }), headers: { h: 'v' } }),
    ).toEqual([]);
  });

  // Defect F7: logical mode accepted what the park statement then refused for ever.
  it('refuses U+0000 in the payload or a header, a header that is not a string, and a payload over jsonb limit', () => {
    expect(unparkableContent({ payloadJson: JSON.stringify({ a: 'x\u0000' }), headers: {} })).toEqual([
      "(payload): contains the character U+0000, which PostgreSQL's jsonb refuses",
    ]);
    expect(
      unparkableContent({ payloadJson: '{}', headers: { h: 'a\u0000', n: 7 as unknown as string } }),
    ).toEqual(["header 'h': contains the character U+0000", "header 'n': a number, not a string"]);
    expect(unparkableContent({ payloadJson: '"12345678"', headers: {} }, 8)).toEqual([
      "(payload): 10 bytes of JSON, over jsonb's limit of 8 bytes",
    ]);
    expect(JSONB_MAX_BYTES).toBe(268_435_455);
  });
});
