import { readEditForm } from './console-edit-form';

describe(readEditForm.name, () => {
  it('reads the payload, header changes (set, remove) and the unvalidated checkbox', () => {
    expect(
      readEditForm({ payload: '{"a":1}', headers: 'tenant=acme\r\npriority=\n\nold', withoutSchema: 'on' }),
    ).toEqual({
      ok: true,
      payload: '{"a":1}',
      headers: { tenant: 'acme', priority: null, old: null },
      withoutSchema: true,
    });
  });

  it('refuses an empty payload and a header line without a name', () => {
    expect(readEditForm({ payload: ' ' })).toMatchObject({ ok: false });
    expect(readEditForm({ payload: '{}', headers: '=x' })).toMatchObject({ ok: false });
  });
});
