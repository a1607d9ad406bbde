import { field } from './console-http';

/** An edit form, read: the edited payload and header changes, or what is wrong with the form. */
export type EditForm =
  | {
      readonly ok: true;
      readonly payload: string;
      readonly headers: Readonly<Record<string, string | null>>;
      readonly withoutSchema: boolean;
    }
  | { readonly ok: false; readonly message: string };

/**
 * Reads the dead-letter page's edit form: `payload` (the whole edited JSON), `headers` (one change a line:
 * `name=value` sets, `name=` or a bare `name` removes), `withoutSchema` (a checkbox). Whether a header may
 * change, and the payload's schema, are the redrive service's to decide.
 */
export function readEditForm(body: Readonly<Record<string, unknown>> | undefined): EditForm {
  const payload = field(body, 'payload');
  if (payload === undefined || payload.trim() === '')
    return { ok: false, message: 'Give the edited payload.' };
  const headers: Record<string, string | null> = {};
  for (const line of (field(body, 'headers') ?? '').split(/\r?\n/)) {
    const text = line.trim();
    if (text === '') continue;
    const at = text.indexOf('=');
    const name = (at < 0 ? text : text.slice(0, at)).trim();
    const value = at < 0 ? '' : text.slice(at + 1).trim();
    if (name === '') return { ok: false, message: 'A header line is name=value (or a name to remove it).' };
    headers[name] = value === '' ? null : value;
  }
  return { ok: true, payload, headers, withoutSchema: field(body, 'withoutSchema') === 'on' };
}
