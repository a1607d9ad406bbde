import { RecordedRedriveAuditEntry, RedriveAuditFilter } from '../../redrive/ledger/redrive-ledger.interface';
import { field } from '../console-http';
import { AUDIT_ACTIONS, AuditPageFilter, AuditPaging } from './audit-views';
import { PageContext } from './layout';

/** A time typed in the filter: `YYYY-MM-DDTHH:MM[:SS]` (a `datetime-local`, read as UTC) or ISO 8601. */
const TYPED_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,3})?)?(Z|[+-]\d\d:\d\d)?$/;

function timeOf(text: string | undefined): Date | undefined {
  if (!text || !TYPED_TIME.test(text)) return undefined;
  const date = new Date(/Z|[+-]\d\d:\d\d$/.test(text) ? text : `${text}Z`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/**
 * The audit page's filter from its query: what the form shows again (only what was understood) and what
 * the ledger is asked. An action that is not one, or a time that does not parse, is left out.
 */
export function auditFilterOf(query: Readonly<Record<string, unknown>>): {
  filter: AuditPageFilter;
  query: Omit<RedriveAuditFilter, 'limit'>;
} {
  const typedAction = field(query, 'action');
  const action = AUDIT_ACTIONS.find((a) => a === typedAction);
  const [fromText, toText] = [field(query, 'from'), field(query, 'to')];
  const [from, to] = [timeOf(fromText), timeOf(toText)];
  const source = field(query, 'source');
  const actor = field(query, 'actor');
  return {
    filter: {
      source,
      actor,
      action,
      from: from ? fromText : undefined,
      to: to ? toText : undefined,
    },
    query: { source, actor, action, from, to },
  };
}

/**
 * A viewer does not see what sign-in entries kept as a name: with an actor filter, those entries are left
 * out, or a viewer could try names (passwords typed in the wrong field) and see whether one matches.
 */
export function hiddenMatchesDropped(
  context: PageContext,
  entries: readonly RecordedRedriveAuditEntry[],
  actor: string | undefined,
): readonly RecordedRedriveAuditEntry[] {
  const viewerOnly = !(context.user?.roles ?? []).some((role) => role !== 'viewer');
  if (!viewerOnly || actor === undefined) return entries;
  return entries.filter((e) => !(e.action === 'ACCESS' && e.outcome.startsWith('SIGN_IN')));
}

/** Where an audit page starts: before an entry (going back), after one (coming forward), or the latest. */
export function auditCursorOf(query: Readonly<Record<string, unknown>>): {
  before?: string;
  after?: string;
} {
  const before = field(query, 'before');
  return before ? { before } : { after: field(query, 'after') };
}

/**
 * One page of the audit log from what the ledger found when asked for one entry more than `size`: that
 * extra entry says there are more (going back, it is the oldest; coming forward, the newest), and where
 * the older and newer links lead.
 */
export function auditPageOf(
  found: readonly RecordedRedriveAuditEntry[],
  cursor: { readonly before?: string; readonly after?: string },
  size: number,
): { entries: readonly RecordedRedriveAuditEntry[]; paging: AuditPaging } {
  const more = found.length > size;
  const entries = more ? (cursor.after ? found.slice(0, size) : found.slice(found.length - size)) : found;
  if (entries.length === 0) return { entries, paging: {} };
  return {
    entries,
    paging: {
      older: more || cursor.after ? entries[0].id : undefined,
      newer: cursor.before || (cursor.after && more) ? entries[entries.length - 1].id : undefined,
    },
  };
}
