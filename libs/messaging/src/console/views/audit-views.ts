import { AuditChainCheck } from '../../redrive/ledger/audit-chain';
import { RecordedRedriveAuditEntry, RedriveAuditAction } from '../../redrive/ledger/redrive-ledger.interface';
import { html, Html } from './html';
import { notice, page, PageContext } from './layout';
import { timeOf } from './time';

/** The audit log's actions, as the filter offers them. */
export const AUDIT_ACTIONS: readonly RedriveAuditAction[] = [
  'PLAN',
  'APPROVE',
  'EXECUTE',
  'REFUSE',
  'ACCESS',
];

/** What the audit page is filtered by, as the form holds it (times as typed: `YYYY-MM-DDTHH:MM`, UTC). */
export interface AuditPageFilter {
  readonly source?: string;
  readonly actor?: string;
  readonly action?: RedriveAuditAction;
  readonly from?: string;
  readonly to?: string;
}

/** Where the audit page's paging links lead: the entries before the oldest shown, after the newest. */
export interface AuditPaging {
  readonly older?: string;
  readonly newer?: string;
}

/** How many breaks of the chain the audit page lists (the CLI's `--verify` lists all). */
const CHAIN_BREAKS_SHOWN = 20;

/** What the audit page says of the hash chain: intact for the entries checked, or where it breaks. */
export function chainNotice(context: PageContext, check: AuditChainCheck, whole: boolean): Html {
  if (!check.intact) {
    const shown = check.breaks.slice(0, CHAIN_BREAKS_SHOWN);
    const more = check.breaks.length - shown.length;
    const places = check.breaks.length === 1 ? 'one place' : `${check.breaks.length} places`;
    return notice(
      'error',
      html`<span data-testid="chain-broken"
          >The audit log’s hash chain is broken in ${places}. Entries were changed or removed outside the CLI
          and the console: compare with a copy of the log.</span
        >${shown.map(
          (b) =>
            html`<br /><span data-testid="chain-break"
                >${b.entry === 'head' ? 'The head' : `Entry ${b.entry}`}: ${b.reason}.</span
              >`,
        )}${more > 0 ? html`<br /><span>And ${more} more: nest-messaging dlq history --verify lists them all.</span>` : ''}`,
    );
  }
  const scope = whole ? `all ${check.checked} entries` : `the latest ${check.checked} entries`;
  const head = check.head
    ? html` (head: entry ${check.head.id}, <span class="mono">${check.head.hash}</span>)`
    : '';
  const more = whole ? '' : html` <a href="${context.base}/audit?verify=all">Check the whole log</a>`;
  return html`<p class="muted" data-testid="chain-intact">
    ${`Hash chain intact for ${scope}`}${head}.${more}
  </p>`;
}

/** A link to the audit page with `filter` and one paging cursor. */
function auditLink(context: PageContext, filter: AuditPageFilter, cursor: Record<string, string>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries({ ...filter, ...cursor })) if (value) query.set(key, value);
  return `${context.base}/audit?${query.toString()}`;
}

/**
 * The audit log, newest first, filtered and paged, with what the check of its hash chain found. A page that
 * checked the whole chain (`whole`) does not refresh itself: an open tab would recompute every entry's hash
 * each refresh (issue 45, finding 7).
 */
export function auditPage(
  context: PageContext,
  entries: readonly RecordedRedriveAuditEntry[],
  filter: AuditPageFilter,
  chain: Html,
  paging: AuditPaging = {},
  whole = false,
): string {
  const input = (name: keyof AuditPageFilter, label: string, type = 'text') =>
    html`<label for="audit-${name}"
      >${label}<input id="audit-${name}" name="${name}" type="${type}" value="${filter[name] ?? ''}"
    /></label>`;
  return page(
    context,
    'Audit log',
    html`${chain}
      <form method="get" class="inline" action="${context.base}/audit" aria-label="Filter the audit log">
        ${input('source', 'Source (dead-letter queue)')} ${input('actor', 'Actor')}
        <label for="audit-action"
          >Action<select id="audit-action" name="action">
            <option value="">any</option>
            ${AUDIT_ACTIONS.map(
              (a) => html`<option value="${a}" ${filter.action === a ? html`selected` : ''}>${a}</option>`,
            )}
          </select></label
        >
        ${input('from', 'From (UTC)', 'datetime-local')} ${input('to', 'Before (UTC)', 'datetime-local')}
        <button type="submit" class="secondary">Filter</button>
      </form>
      <table aria-label="Audit log">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">At</th>
            <th scope="col">Action</th>
            <th scope="col">Actor</th>
            <th scope="col">Outcome</th>
            <th scope="col">Source → target</th>
            <th scope="col">Approver</th>
            <th scope="col">Redrive id</th>
            <th scope="col">Detail</th>
          </tr>
        </thead>
        <tbody>
          ${
            entries.length === 0
              ? html`<tr>
                  <td colspan="9" class="muted">No entries.</td>
                </tr>`
              : ''
          }
          ${[...entries].reverse().map((e) => {
            const hidden = hideFrom(context, e);
            return html`<tr>
              <td>${e.id}</td>
              <td>${timeOf(e.at)}</td>
              <td>${e.action}</td>
              <td>${hidden ? '(hidden from viewers)' : e.actor}</td>
              <td>
                ${e.outcome}${e.overrides?.length ? html` <strong>(override: ${e.overrides.join(', ')})</strong>` : ''}
              </td>
              <td>${e.source ?? ''}${e.target ? ` → ${e.target}` : ''}</td>
              <td>${e.approver ?? ''}</td>
              <td class="mono">${e.redriveId ?? ''}</td>
              <td>${hidden ? '' : (e.detail ?? '')}</td>
            </tr>`;
          })}
        </tbody>
      </table>
      <nav class="pager" aria-label="Audit log pages">
        ${paging.newer ? html`<a href="${auditLink(context, filter, { after: paging.newer })}" rel="prev">Newer entries</a>` : ''}
        ${paging.older ? html`<a href="${auditLink(context, filter, { before: paging.older })}" rel="next">Older entries</a>` : ''}
      </nav>`,
    '/audit',
    { refresh: !whole },
  );
}

/**
 * Sign-in entries keep what was typed as a name (entries written before names were left out: often a
 * password typed in the wrong field): viewers do not see it.
 */
function hideFrom(context: PageContext, entry: RecordedRedriveAuditEntry): boolean {
  const viewerOnly = !(context.user?.roles ?? []).some((role) => role !== 'viewer');
  return viewerOnly && entry.action === 'ACCESS' && entry.outcome.startsWith('SIGN_IN');
}
