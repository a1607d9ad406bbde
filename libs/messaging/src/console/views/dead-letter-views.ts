import { MessagePosition } from '../../redrive/redrive-plan';
import { DeadLetterPayload, InspectedDeadLetter } from '../../redrive/inspected-dead-letter';
import { DeadLetterQueueInfo } from '../../redrive/redrive-result';
import { RedriveLimits } from '../../redrive/redrive-limits';
import { ReadCutOff } from '../../redrive/read-budget';
import { cutOffText } from '../../redrive/plan-contents';
import { csrfField, headRow, page, PageContext } from './layout';
import { html, Html } from './html';
import { payloadSection } from './payload-views';
import { editSection } from './edit-views';
import { positionParam } from './position-param';
import { queueViews } from './queue-nav';

/** The filters of the dead-letter view. */
export interface DeadLetterFilter {
  readonly category?: string;
  readonly code?: string;
  readonly type?: string;
  /** Only messages whose last failure is at least this many minutes old. */
  readonly olderThanMinutes?: number;
}

/** True when `letter` passes `filter` at `now`. */
export function matchesFilter(letter: InspectedDeadLetter, filter: DeadLetterFilter, now: number): boolean {
  const m = letter.message;
  if (filter.category && m.failureCategory !== filter.category) return false;
  if (filter.code && m.failureCode !== filter.code) return false;
  if (filter.type && m.type !== filter.type) return false;
  if (filter.olderThanMinutes !== undefined) {
    const at = Date.parse(m.lastFailureAt ?? '');
    if (!Number.isFinite(at) || now - at < filter.olderThanMinutes * 60_000) return false;
  }
  return true;
}

/**
 * What a read's byte budget left out, when it did: `N more not shown: byte budget of 16 MiB reached`. Plans
 * read no further than a page does.
 */
export function cutOffNotice(cutOff: ReadCutOff | undefined): Html {
  if (!cutOff) return html``;
  return html`<p class="notice error" role="status" data-testid="cut-off">
    ${cutOffText(cutOff, 'shown')}. A plan reads no further than this page.
  </p>`;
}

/** The dead-letter queues and their depths. */
export function deadLetterQueuesPage(context: PageContext, queues: readonly DeadLetterQueueInfo[]): string {
  return page(
    context,
    'Dead letters',
    queuesTable(context, queues, html`aria-label="Dead-letter queues"`),
    '/dead-letters',
  );
}

/** The dead-letter queues with their depths, each linking to its messages. */
export function queuesTable(context: PageContext, queues: readonly DeadLetterQueueInfo[], label: Html): Html {
  return html`<table ${label}>
    ${headRow(['Dead-letter queue', '#Waiting'])}
    <tbody>
      ${queues.map(
        (q) =>
          html`<tr>
            <td><a href="${context.base}/dead-letters/${encodeURIComponent(q.name)}">${q.name}</a></td>
            <td class="num">${q.exists ? q.depth : 'missing'}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** One dead-letter queue's messages (the first 100, from the head), filtered; the form that plans a redrive. */
export function deadLetterQueuePage(
  context: PageContext,
  queue: string,
  letters: readonly InspectedDeadLetter[],
  filter: DeadLetterFilter,
  mayPlan: boolean,
  now: number,
  cutOff?: ReadCutOff,
): string {
  const shown = letters.filter((l) => matchesFilter(l, filter, now));
  const queuePath = `${context.base}/dead-letters/${encodeURIComponent(queue)}`;
  const select = (
    id: string,
    label: string,
    pick: (l: InspectedDeadLetter) => string | null,
    selected?: string,
  ) =>
    html`<label for="${id}"
      >${label}<select id="${id}" name="${id}">
        <option value="">any</option>
        ${[...new Set(letters.map(pick).filter((v): v is string => v !== null))]
          .sort()
          .map((v) => html`<option${v === selected ? html` selected` : ''}>${v}</option>`)}
      </select></label
    >`;
  return page(
    context,
    `Dead letters: ${queue}`,
    html`${queueViews(context, queue)}
      <form method="get" class="inline" action="${queuePath}" aria-label="Filter">
        ${select('category', 'Category', (l) => l.message.failureCategory, filter.category)}
        ${select('code', 'Code', (l) => l.message.failureCode, filter.code)}
        ${select('type', 'Type', (l) => l.message.type, filter.type)}
        <label for="older"
          >Last failure at least (minutes ago)<input
            id="older"
            name="olderThanMinutes"
            type="number"
            min="0"
            value="${filter.olderThanMinutes ?? ''}"
        /></label>
        <button type="submit" class="secondary">Filter</button>
      </form>
      <p>${shown.length} of the ${letters.length} message(s) at the head of the queue match.</p>
      ${cutOffNotice(cutOff)}
      <table aria-label="Dead letters">
        ${headRow(['#Position', 'Message id', 'Type', 'Failure', '#Attempts', 'First failure', 'Last failure', '#Redrives'])}
        <tbody>
          ${shown.map((l) => {
            const m = l.message;
            return html`<tr>
              <td class="num">${positionOf(m.position)}</td>
              <td class="mono">
                ${m.messageId ? html`<a href="${queuePath}/messages/${encodeURIComponent(m.messageId)}?at=${positionParam(m.position)}">${m.messageId}</a>` : '(none)'}
              </td>
              <td>${m.type ?? ''}</td>
              <td>${m.failureCategory ?? ''}/${m.failureCode ?? ''}</td>
              <td class="num">${m.attempts ?? ''}</td>
              <td>${l.firstFailureAt ?? ''}</td>
              <td>${m.lastFailureAt ?? ''}</td>
              <td class="num">${m.redriveCount}</td>
            </tr>`;
          })}
        </tbody>
      </table>
      ${
        mayPlan
          ? html`<h2 id="plan">Plan a redrive (dry run)</h2>
              <p class="muted">
                A redrive moves messages from the head of the queue, in order: choose how many. Planning
                changes nothing.
              </p>
              <form
                method="post"
                class="inline"
                action="${context.base}/redrive/plans"
                aria-labelledby="plan"
              >
                ${csrfField(context)}
                <input type="hidden" name="source" value="${queue}" />
                <label for="limit"
                  >Messages from the head (1–100)<input
                    id="limit"
                    name="limit"
                    type="number"
                    min="1"
                    max="100"
                    value="${Math.max(1, Math.min(100, letters.length))}"
                    required
                /></label>
                <button type="submit">Plan redrive</button>
              </form>`
          : ''
      }`,
    '/dead-letters',
  );
}

/** One parked message: its headers, attempts and failures; the start of its payload when `payload` is given. */
export function deadLetterPage(
  context: PageContext,
  queue: string,
  letter: InspectedDeadLetter,
  payload: DeadLetterPayload | undefined,
  mayEdit = false,
): string {
  const m = letter.message;
  return page(
    context,
    `Message ${m.messageId ?? '(no id)'}`,
    html`<p><a href="${context.base}/dead-letters/${encodeURIComponent(queue)}">Back to ${queue}</a></p>
      <dl class="facts">
        <dt>Type</dt>
        <dd>${m.type ?? ''}</dd>
        <dt>Failure</dt>
        <dd>${m.failureCategory ?? ''}/${m.failureCode ?? ''}</dd>
        <dt>Attempts</dt>
        <dd>${m.attempts ?? ''}</dd>
        <dt>First failure</dt>
        <dd>${letter.firstFailureAt ?? ''}</dd>
        <dt>Last failure</dt>
        <dd>${m.lastFailureAt ?? ''}</dd>
        <dt>Origin</dt>
        <dd>${m.originDestination ?? ''}</dd>
        <dt>Earlier redrives</dt>
        <dd>${m.previousRedriveIds.join(', ') || 'none'}</dd>
      </dl>
      <h2 id="headers">Headers</h2>
      <table aria-labelledby="headers">
        <thead>
          <tr>
            <th scope="col">Header</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          ${Object.entries(letter.headers)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(
              ([k, v]) =>
                html`<tr>
                  <td class="mono">${k}</td>
                  <td class="mono">${v}</td>
                </tr>`,
            )}
        </tbody>
      </table>
      ${
        letter.headersNotShown
          ? html`<p class="muted" data-testid="headers-not-shown">
              ${letter.headersNotShown} more header(s) not shown: too many or too large.
            </p>`
          : ''
      }
      <h2 id="payload">Payload</h2>
      ${payloadSection(context, payload, payloadHref(context, queue, letter))}
      ${mayEdit && payload ? editSection(context, queue, letter, payload) : ''}`,
    '/dead-letters',
  );
}

/** Where a message's payload downloads from. */
function payloadHref(context: PageContext, queue: string, letter: InspectedDeadLetter): string {
  const m = letter.message;
  const id = encodeURIComponent(m.messageId ?? '');
  return `${context.base}/dead-letters/${encodeURIComponent(queue)}/messages/${id}/payload?at=${positionParam(m.position)}`;
}

/** A message's position as the plan shows it. */
export function positionOf(position: InspectedDeadLetter['message']['position']): string {
  return position.kind === 'queue' ? `#${position.index}` : `p${position.partition}@${position.offset}`;
}

export { positionParam } from './position-param';

/** The position of a message link, or undefined when it is not one. */
export function positionFromParam(param: string | undefined): MessagePosition | undefined {
  // The "all" page lists up to MAX_SCAN (5,000) messages: each can be opened, none beyond.
  const queue = /^q(\d{1,4})$/.exec(param ?? '');
  if (queue) {
    const index = Number(queue[1]);
    return index < RedriveLimits.MAX_SCAN ? { kind: 'queue', index } : undefined;
  }
  const partition = /^p(\d{1,6})-(\d{1,19})$/.exec(param ?? '');
  return partition ? { kind: 'partition', partition: Number(partition[1]), offset: partition[2] } : undefined;
}
