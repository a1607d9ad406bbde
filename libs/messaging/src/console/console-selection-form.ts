import { PlanAction, PlanSelection } from '../redrive/plan-selection';
import { field } from './console-http';

/** A selection plan form, read: what to plan, or what is wrong with the form. */
export type SelectionForm =
  | { readonly ok: true; readonly selection: PlanSelection; readonly action: Exclude<PlanAction, 'edit'> }
  | { readonly ok: false; readonly message: string };

/**
 * Reads a selection plan form: `by` `ids` (checkboxes named `ids`, or one comma-separated `ids`) or
 * `filter` (`category`, `code`, `type`, `olderThanMinutes`); `action` `redrive` (default) or `discard`.
 */
export function readSelectionForm(body: Readonly<Record<string, unknown>> | undefined): SelectionForm {
  const action = field(body, 'action') ?? 'redrive';
  if (action !== 'redrive' && action !== 'discard')
    return { ok: false, message: 'Plan a redrive or a discard.' };
  if (field(body, 'by') === 'ids') {
    const raw = body?.ids;
    const values = Array.isArray(raw) ? raw : [raw];
    const messageIds = values
      .flatMap((v) => (typeof v === 'string' ? v.split(',') : []))
      .map((id) => id.trim())
      .filter(Boolean);
    if (messageIds.length === 0) return { ok: false, message: 'Pick at least one message.' };
    if (messageIds.length > 100) return { ok: false, message: 'Pick at most 100 messages for one plan.' };
    return { ok: true, action, selection: { by: 'ids', messageIds: [...new Set(messageIds)] } };
  }
  const older = field(body, 'olderThanMinutes');
  const olderThanMinutes = older === undefined ? undefined : Number(older);
  if (olderThanMinutes !== undefined && !(Number.isFinite(olderThanMinutes) && olderThanMinutes >= 0)) {
    return { ok: false, message: 'The age is a number of minutes, 0 or more.' };
  }
  const filter = {
    ...optional('category', field(body, 'category')),
    ...optional('code', field(body, 'code')),
    ...optional('type', field(body, 'type')),
    ...(olderThanMinutes !== undefined ? { olderThanMinutes } : {}),
  };
  if (Object.keys(filter).length === 0) {
    return { ok: false, message: 'Choose a group, a type, a code or an age (or plan from the head).' };
  }
  return { ok: true, action, selection: { by: 'filter', ...filter } };
}

function optional<K extends string>(name: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [name]: value } as Record<K, string>);
}
