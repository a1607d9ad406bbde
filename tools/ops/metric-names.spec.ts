import { exposedNames, mentionedMetrics, tableExpressions } from './metric-names';

describe('metric-names', () => {
  describe(exposedNames.name, () => {
    it("names a histogram's buckets, sum and count, and other metrics as they are", () => {
      const names = exposedNames([
        { name: 'messaging_lag_seconds', type: 'histogram' },
        { name: 'messaging_pending', type: 'gauge' },
      ]);
      expect([...names].sort()).toEqual([
        'messaging_lag_seconds_bucket',
        'messaging_lag_seconds_count',
        'messaging_lag_seconds_sum',
        'messaging_pending',
      ]);
    });
  });

  describe(mentionedMetrics.name, () => {
    it('finds each messaging_ name once, in selectors and functions alike', () => {
      const expr = 'rate(messaging_a_total{outcome="x"}[5m]) / messaging_b + rate(messaging_a_total[1m])';
      expect(mentionedMetrics(expr)).toEqual(['messaging_a_total', 'messaging_b']);
    });
  });

  describe(tableExpressions.name, () => {
    it("reads the second cell's code span of each row", () => {
      const table = ['| Alert | Expression |', '| --- | --- |', '| Stuck | `max(x) > 1` |', 'text `y`'].join(
        '\n',
      );
      expect(tableExpressions(table)).toEqual(['max(x) > 1']);
    });
  });
});
