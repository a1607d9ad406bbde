import { positionFromParam, positionParam } from './dead-letter-views';

describe(positionFromParam.name, () => {
  // Issue 45 finding 14: the "all" page lists up to 5,000 messages; #1000 and later could not be opened.
  it('reads every position the "all" page links to, and none beyond 5,000', () => {
    for (const index of [0, 999, 1_000, 4_999]) {
      expect(positionFromParam(positionParam({ kind: 'queue', index }))).toEqual({ kind: 'queue', index });
    }
    for (const param of ['q5000', 'q99999', 'q-1', 'q1e3', 'q'])
      expect(positionFromParam(param)).toBeUndefined();
    expect(positionFromParam('p2-17')).toEqual({ kind: 'partition', partition: 2, offset: '17' });
  });
});
