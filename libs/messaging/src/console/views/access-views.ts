import { ServiceFigures } from '../console-metrics';
import { DeadLetterQueueInfo } from '../../dead-letter/redrive/redrive-result';
import { html, Html } from './html';
import { queuesTable } from './dead-letter-views';
import { notice, page, PageContext } from './layout';

/** The sign-in form. */
export function loginPage(context: PageContext, loginToken: string, error?: string): string {
  return page(
    context,
    'Sign in',
    html`<div class="login">
      ${error ? notice('error', error) : ''}
      <form method="post" action="${context.base}/login">
        <input type="hidden" name="_csrf" value="${loginToken}" />
        <label for="name"
          >User name<input id="name" name="name" autocomplete="username" required autofocus
        /></label>
        <label for="password"
          >Password<input
            id="password"
            name="password"
            type="password"
            autocomplete="current-password"
            required
        /></label>
        <button type="submit">Sign in</button>
      </form>
    </div>`,
  );
}

/** A refusal or error page. */
export function messagePage(context: PageContext, title: string, text: string | Html): string {
  return page(
    context,
    title,
    html`${notice('error', text)}
      <p><a href="${context.base}">Back to the overview</a></p>`,
  );
}

const num = (n: number | undefined, digits = 0) => (n === undefined ? '–' : n.toFixed(digits));

/** Per destination and per consumer group, from the services' metrics; DLQ depths from the broker. */
export function overviewPage(
  context: PageContext,
  services: readonly ServiceFigures[],
  queues: readonly DeadLetterQueueInfo[],
  queueError?: string,
): string {
  const destinations = services.flatMap((s) => s.destinations);
  const groups = services.flatMap((s) => s.groups);
  const depthOf = (group: string, destination: string) =>
    queues.find((q) => q.name === `${destination}.${group}.dlq`)?.depth;
  return page(
    context,
    'Overview',
    html`${services.filter((s) => s.error).map((s) => notice('error', `${s.service}: metrics not readable (${s.error})`))}
      <h2 id="outbox">Outbox, per destination</h2>
      <table aria-labelledby="outbox">
        <thead>
          <tr>
            <th scope="col">Service</th>
            <th scope="col">Destination</th>
            <th scope="col" class="num">Pending</th>
            <th scope="col" class="num">Oldest pending (s)</th>
            <th scope="col" class="num">Published / min</th>
            <th scope="col" class="num">Published (total)</th>
          </tr>
        </thead>
        <tbody>
          ${
            destinations.length === 0
              ? html`<tr>
                  <td colspan="6" class="muted">No outbox figures yet.</td>
                </tr>`
              : ''
          }
          ${destinations.map(
            (d) =>
              html`<tr>
                <td>${d.service}</td>
                <td>${d.destination}</td>
                <td class="num">${d.pending}</td>
                <td class="num">${num(d.oldestPendingAgeSeconds, 1)}</td>
                <td class="num">${num(d.publishedPerMinute, 1)}</td>
                <td class="num">${d.publishedTotal}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      <h2 id="groups">Consumer groups</h2>
      <table aria-labelledby="groups">
        <thead>
          <tr>
            <th scope="col">Service</th>
            <th scope="col">Group</th>
            <th scope="col">Destination</th>
            <th scope="col" class="num">Handled</th>
            <th scope="col" class="num">Duplicates</th>
            <th scope="col" class="num">Retries</th>
            <th scope="col">Failed attempts by category</th>
            <th scope="col" class="num">Dead-lettered</th>
            <th scope="col" class="num">DLQ depth</th>
          </tr>
        </thead>
        <tbody>
          ${
            groups.length === 0
              ? html`<tr>
                  <td colspan="9" class="muted">No consumer figures yet.</td>
                </tr>`
              : ''
          }
          ${groups.map(
            (g) =>
              html`<tr>
                <td>${g.service}</td>
                <td>${g.group}</td>
                <td>${g.destination}</td>
                <td class="num">${g.handled}</td>
                <td class="num">${g.duplicates}</td>
                <td class="num">${g.retries}</td>
                <td>
                  ${
                    Object.entries(g.failedByCategory)
                      .map(([c, n]) => `${c}: ${n}`)
                      .join(', ') || '–'
                  }
                </td>
                <td class="num">${g.deadLettered}</td>
                <td class="num">${num(depthOf(g.group, g.destination))}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      <h2 id="dlqs">Dead-letter queues</h2>
      ${queueError ? notice('error', queueError) : ''}
      ${queuesTable(context, queues, html`aria-labelledby="dlqs"`)}
      <p class="muted">
        Counters are since each service started; "published / min" needs two readings a minute apart.
      </p>`,
    '',
    { refresh: true },
  );
}
