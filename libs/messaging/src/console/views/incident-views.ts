import { DeadLetterGroup } from '../../redrive/dead-letter-groups';
import { InspectedDeadLetter } from '../../redrive/inspected-dead-letter';
import { PlanSelection } from '../../redrive/plan-selection';
import { ReadCutOff } from '../../redrive/read-budget';
import { cutOffNotice, positionOf, positionParam } from './dead-letter-views';
import { html, Html } from './html';
import { csrfField, headRow, page, PageContext } from './layout';
import { queuePath, queueViews } from './queue-nav';

/** Messages per page of a dead-letter queue's "all messages" view. */
export const LETTERS_PER_PAGE = 50;

/** A queue's dead letters grouped by failure category and code; an operator plans a redrive or discard per group. */
export function groupsPage(
  context: PageContext,
  queue: string,
  groups: readonly DeadLetterGroup[],
  depth: number,
  read: number,
  mayPlan: boolean,
  cutOff?: ReadCutOff,
): string {
  return page(
    context,
    `Grouped by cause: ${queue}`,
    html`${queueViews(context, queue)}
      <p>
        ${depth} waiting; ${read === depth ? 'all' : `the first ${read}`} read, in ${groups.length} group(s).
      </p>
      ${cutOffNotice(cutOff)}
      <table aria-label="Groups">
        ${headRow(['Failure category', 'Failure code', '#Messages', 'Event types', 'First seen', 'Last seen', ...(mayPlan ? ['Plan'] : [])])}
        <tbody>
          ${groups.map(
            (g) =>
              html`<tr data-testid="group">
                <td>${g.category ?? '(none)'}</td>
                <td class="mono">${g.code ?? '(none)'}</td>
                <td class="num">${g.count}</td>
                <td>${g.types.join(', ')}</td>
                <td>${g.firstSeen ?? ''}</td>
                <td>${g.lastSeen ?? ''}</td>
                ${
                  mayPlan
                    ? html`<td>
                        ${planForm(context, queue, { by: 'filter', ...filterOf(g) }, 'redrive', `Plan redrive of ${g.code ?? 'group'}`)}
                        ${planForm(context, queue, { by: 'filter', ...filterOf(g) }, 'discard', `Plan discard of ${g.code ?? 'group'}`, 'secondary')}
                      </td>`
                    : ''
                }
              </tr>`,
          )}
        </tbody>
      </table>
      <p class="muted">
        A plan takes at most 100 messages of a group; plan again for the rest. A message that cannot be
        redriven is shown on the plan as skipped and stays, never blocking the others.
      </p>`,
    '/dead-letters',
  );
}

/** Every message of a queue (as far as a plan reads), a page at a time, with boxes to pick messages for a plan. */
export function allLettersPage(
  context: PageContext,
  queue: string,
  letters: readonly InspectedDeadLetter[],
  depth: number,
  pageNumber: number,
  mayPlan: boolean,
  cutOff?: ReadCutOff,
): string {
  const pages = Math.max(1, Math.ceil(letters.length / LETTERS_PER_PAGE));
  const shown = letters.slice((pageNumber - 1) * LETTERS_PER_PAGE, pageNumber * LETTERS_PER_PAGE);
  const path = `${queuePath(context, queue)}/all`;
  const pager = html`<p class="inline" data-testid="pager">
    Page ${pageNumber} of ${pages} (${letters.length} of ${depth} waiting read)
    ${pageNumber > 1 ? html`<a href="${path}?page=${pageNumber - 1}" rel="prev">Previous</a>` : ''}
    ${pageNumber < pages ? html`<a href="${path}?page=${pageNumber + 1}" rel="next">Next</a>` : ''}
  </p>`;
  const table = lettersTable(context, queue, shown, mayPlan);
  return page(
    context,
    `All messages: ${queue}`,
    html`${queueViews(context, queue)} ${pager} ${cutOffNotice(cutOff)}
    ${
      mayPlan
        ? html`<form
            method="post"
            action="${context.base}/redrive/selections"
            aria-label="Plan picked messages"
          >
            ${csrfField(context)}<input type="hidden" name="source" value="${queue}" />
            <input type="hidden" name="by" value="ids" />
            ${table}
            <label for="action"
              >Plan a<select id="action" name="action">
                <option value="redrive">redrive</option>
                <option value="discard">discard (archive)</option>
              </select></label
            >
            <button type="submit">Plan the picked messages</button>
          </form>`
        : table
    }
    ${pager}`,
    '/dead-letters',
  );
}

/** The form to find messages by id or real key, and what it found. */
export function searchPage(
  context: PageContext,
  queue: string,
  query: { messageId?: string; key?: string },
  found: readonly InspectedDeadLetter[] | undefined,
  mayPlan: boolean,
  mayFindByKey: boolean,
  cutOff?: ReadCutOff,
): string {
  const path = queuePath(context, queue);
  return page(
    context,
    `Find a message: ${queue}`,
    html`${queueViews(context, queue)}
      <form method="post" action="${path}/search" class="inline" aria-label="Find">
        ${csrfField(context)}
        <label for="messageId"
          >Message id<input id="messageId" name="messageId" value="${query.messageId ?? ''}"
        /></label>
        ${
          mayFindByKey
            ? html`<label for="key"
                >Key (the real one; compared through its pseudonym, never shown)<input
                  id="key"
                  name="key"
                  type="password"
                  autocomplete="off"
              /></label>`
            : ''
        }
        <button type="submit">Find</button>
      </form>
      ${
        found === undefined
          ? ''
          : html`<p data-testid="found">${found.length} message(s) found.</p>
              ${cutOffNotice(cutOff)} ${lettersTable(context, queue, found, false)}
              ${
                mayPlan && found.length > 0
                  ? html`${planForm(context, queue, { by: 'ids', messageIds: found.flatMap((l) => (l.message.messageId ? [l.message.messageId] : [])) }, 'redrive', 'Plan redrive of these')}
                    ${planForm(context, queue, { by: 'ids', messageIds: found.flatMap((l) => (l.message.messageId ? [l.message.messageId] : [])) }, 'discard', 'Plan discard of these', 'secondary')}`
                  : ''
              }`
      }`,
    '/dead-letters',
  );
}

/** The messages discarded from a queue: archived, never run again, still readable here. */
export function archivePage(
  context: PageContext,
  queue: string,
  letters: readonly InspectedDeadLetter[],
  depth: number,
  cutOff?: ReadCutOff,
): string {
  return page(
    context,
    `Archive: ${queue}.archive`,
    html`${queueViews(context, queue)}
      <p>${depth} message(s) discarded from ${queue} (the first ${letters.length} shown).</p>
      ${cutOffNotice(cutOff)}
      <table aria-label="Archived messages">
        ${headRow(['Message id', 'Type', 'Failure', 'Last failure', 'Discard id'])}
        <tbody>
          ${letters.map(
            (l) =>
              html`<tr>
                <td class="mono">${l.message.messageId ?? '(none)'}</td>
                <td>${l.message.type ?? ''}</td>
                <td>${l.message.failureCategory ?? ''}/${l.message.failureCode ?? ''}</td>
                <td>${l.message.lastFailureAt ?? ''}</td>
                <td class="mono">${l.headers['msg.archive-id'] ?? ''}</td>
              </tr>`,
          )}
        </tbody>
      </table>`,
    '/dead-letters',
  );
}

function lettersTable(
  context: PageContext,
  queue: string,
  letters: readonly InspectedDeadLetter[],
  pick: boolean,
): Html {
  const path = queuePath(context, queue);
  return html`<table aria-label="Dead letters">
    ${headRow([...(pick ? ['Pick'] : []), '#Position', 'Message id', 'Type', 'Failure', '#Attempts', 'Last failure', '#Redrives'])}
    <tbody>
      ${letters.map((l) => {
        const m = l.message;
        return html`<tr>
          ${pick ? html`<td>${m.messageId ? html`<input type="checkbox" name="ids" value="${m.messageId}" aria-label="Pick ${m.messageId}" />` : ''}</td>` : ''}
          <td class="num">${positionOf(m.position)}</td>
          <td class="mono">
            ${m.messageId ? html`<a href="${path}/messages/${encodeURIComponent(m.messageId)}?at=${positionParam(m.position)}">${m.messageId}</a>` : '(none)'}
          </td>
          <td>${m.type ?? ''}</td>
          <td>${m.failureCategory ?? ''}/${m.failureCode ?? ''}</td>
          <td class="num">${m.attempts ?? ''}</td>
          <td>${m.lastFailureAt ?? ''}</td>
          <td class="num">${m.redriveCount}</td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}

/** A one-button form that plans `action` of `selection`. */
function planForm(
  context: PageContext,
  queue: string,
  selection: PlanSelection,
  action: 'redrive' | 'discard',
  label: string,
  style = '',
): Html {
  const fields =
    selection.by === 'ids'
      ? html`<input type="hidden" name="ids" value="${selection.messageIds.join(',')}" />`
      : html`${selection.category !== undefined ? html`<input type="hidden" name="category" value="${selection.category}" />` : ''}
        ${selection.code !== undefined ? html`<input type="hidden" name="code" value="${selection.code}" />` : ''}`;
  return html`<form method="post" action="${context.base}/redrive/selections" class="inline">
    ${csrfField(context)}<input type="hidden" name="source" value="${queue}" />
    <input type="hidden" name="by" value="${selection.by}" /><input
      type="hidden"
      name="action"
      value="${action}"
    />
    ${fields}<button type="submit" class="${style}">${label}</button>
  </form>`;
}

function filterOf(group: DeadLetterGroup): { category?: string; code?: string } {
  return {
    ...(group.category !== null ? { category: group.category } : {}),
    ...(group.code !== null ? { code: group.code } : {}),
  };
}
