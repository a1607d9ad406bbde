import { HeaderDisplayLimits, shownHeaders } from './shown-headers';

describe(shownHeaders.name, () => {
  it('shows every header of an ordinary message as it is', () => {
    const headers = { 'msg.id': 'm-1', traceparent: '00-abc' };
    expect(shownHeaders(headers)).toEqual({ headers, notShown: 0 });
  });

  it('shows at most MAX_HEADERS, the library headers first, and counts the rest', () => {
    const bomb = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`x-${i}`, 'v']));
    const { headers, notShown } = shownHeaders({ ...bomb, 'msg.id': 'm-1' });
    expect(Object.keys(headers)).toHaveLength(HeaderDisplayLimits.MAX_HEADERS);
    expect(headers['msg.id']).toBe('m-1');
    expect(notShown).toBe(10_001 - HeaderDisplayLimits.MAX_HEADERS);
  });

  it('cuts long names and values, marked with their length, and stops at MAX_TOTAL_CHARS', () => {
    const big = 'v'.repeat(5 * 1024 * 1024);
    const { headers, notShown } = shownHeaders({ a: big, b: big, ['n'.repeat(3000)]: 'x' });
    expect(headers.a).toBe(`${'v'.repeat(HeaderDisplayLimits.MAX_TEXT_CHARS)}… (${big.length} characters)`);
    const chars = Object.entries(headers).reduce((sum, [k, v]) => sum + k.length + v.length, 0);
    expect(chars).toBeLessThanOrEqual(HeaderDisplayLimits.MAX_TOTAL_CHARS);
    expect(Object.keys(headers).some((k) => k.startsWith('nnn') && k.endsWith('(3000 characters)'))).toBe(
      true,
    );
    expect(notShown).toBe(0);
  });
});
