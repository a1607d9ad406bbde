import { CliUsageError } from '../cli-usage.error';
import { selectionOf } from './plan-selection-flags';

describe(selectionOf.name, () => {
  it('is undefined (from the head) without selection flags', () => {
    expect(selectionOf({})).toBeUndefined();
  });

  it('reads --ids, and a filter of --category, --code, --type and --older-than', () => {
    expect(selectionOf({ ids: 'a, b,' })).toEqual({ by: 'ids', messageIds: ['a', 'b'] });
    expect(
      selectionOf({ category: 'AUTHORIZATION', code: 'QueryFailedError/42501', olderThan: '1h' }),
    ).toEqual({
      by: 'filter',
      category: 'AUTHORIZATION',
      code: 'QueryFailedError/42501',
      olderThanMinutes: 60,
    });
  });

  it('refuses --ids with a filter', () => {
    expect(() => selectionOf({ ids: 'a', code: 'x' })).toThrow(CliUsageError);
  });
});
