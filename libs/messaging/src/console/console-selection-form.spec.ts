import { readSelectionForm } from './console-selection-form';

describe(readSelectionForm.name, () => {
  it('reads picked ids from checkboxes or one comma-separated field, without duplicates', () => {
    expect(readSelectionForm({ by: 'ids', ids: ['a', 'b', 'a'] })).toEqual({
      ok: true,
      action: 'redrive',
      selection: { by: 'ids', messageIds: ['a', 'b'] },
    });
    expect(readSelectionForm({ by: 'ids', ids: 'a, c', action: 'discard' })).toEqual({
      ok: true,
      action: 'discard',
      selection: { by: 'ids', messageIds: ['a', 'c'] },
    });
  });

  it('reads a group or filter', () => {
    expect(
      readSelectionForm({ by: 'filter', category: 'AUTHORIZATION', code: 'QueryFailedError/42501' }),
    ).toEqual({
      ok: true,
      action: 'redrive',
      selection: { by: 'filter', category: 'AUTHORIZATION', code: 'QueryFailedError/42501' },
    });
    expect(readSelectionForm({ by: 'filter', olderThanMinutes: '30' })).toMatchObject({
      selection: { by: 'filter', olderThanMinutes: 30 },
    });
  });

  it('refuses an empty pick, an empty filter, a bad age or action', () => {
    expect(readSelectionForm({ by: 'ids' })).toMatchObject({ ok: false });
    expect(readSelectionForm({ by: 'filter' })).toMatchObject({ ok: false });
    expect(readSelectionForm({ by: 'filter', olderThanMinutes: '-1' })).toMatchObject({ ok: false });
    expect(readSelectionForm({ by: 'filter', code: 'x', action: 'delete' })).toMatchObject({ ok: false });
  });
});
