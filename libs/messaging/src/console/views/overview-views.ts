import { DeadLetterQueueInfo } from '../../redrive/redrive-result';
import { ServiceFigures } from '../console-metrics';
import type { OverviewTrends } from '../trends/overview-trends';
import { html, Html } from './html';
import { headRow, notice, page, PageContext } from './layout';
import { trendCell } from './sparkline';
import { timeOf } from './time';

const num = (n: number | undefined, digits = 0) => (n === undefined ? '–' : n.toFixed(digits));

/** A dead-letter queue on the overview: its depth, and since when its oldest message waits. */
export interface OverviewQueue extends DeadLetterQueueInfo {
  /** When its oldest waiting message was parked (its last failure), ISO 8601; undefined if unknown or empty. */
  readonly oldestParkedAt?: string;
}

/** What the overview shows. */
export interface Overview {
  readonly services: readonly ServiceFigures[];
  readonly queues: readonly OverviewQueue[];
  readonly queueError?: string;
  /** When it was read, ms since the epoch: ages are told from it. */
  readonly now: number;
  /** The figures over the last hour, drawn beside them (`ConsoleTrends`); none: no charts. */
  readonly trends?: OverviewTrends;
}

/** A link to a dead-letter queue's page. */
function queueLink(context: PageContext, name: string, text: string | number | Html = name): Html {
  return html`<a href="${context.base}/dead-letters/${encodeURIComponent(name)}">${text}</a>`;
}

/** Each service up or down (and when a down one last answered). */
function servicesTable(context: PageContext, services: readonly ServiceFigures[], now: number): Html {
  return html`<table aria-labelledby="services">
    ${headRow(['Service', 'State', 'Since'])}
    <tbody>
      ${
        services.length === 0
          ? html`<tr>
              <td colspan="3" class="muted">No services configured (metricsSources).</td>
            </tr>`
          : ''
      }
      ${services.map(
        (s) =>
          html`<tr data-service="${s.service}" data-state="${s.error ? 'down' : 'up'}">
            <td>${s.service}</td>
            <td>
              ${
                s.error
                  ? html`<strong class="bad">down</strong> <span class="muted">(${s.error})</span>`
                  : html`<span class="good">up</span>`
              }
            </td>
            <td>
              ${s.error ? (s.lastUpAt === undefined ? 'never answered here' : html`last answered ${timeOf(new Date(s.lastUpAt), now)}`) : ''}
            </td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** Each DLQ: depth and its oldest message's age, linked to its page. */
function queuesTable(
  context: PageContext,
  queues: readonly OverviewQueue[],
  now: number,
  trends?: OverviewTrends,
): Html {
  return html`<table aria-labelledby="dlqs">
    ${headRow(['Dead-letter queue', '#Waiting', 'Oldest waiting since', 'Last hour'])}
    <tbody>
      ${queues.map(
        (q) =>
          html`<tr data-queue="${q.name}">
            <td>${queueLink(context, q.name)}</td>
            <td class="num">${q.exists ? q.depth : 'missing'}</td>
            <td data-testid="oldest">${q.depth > 0 ? timeOf(q.oldestParkedAt, now) : ''}</td>
            ${trendCell(q.name, [{ caption: 'waiting', trend: trends?.of('dlqDepth', q.name) }])}
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/**
 * Per service, its scheduled messages: how many wait, and when the next is due (overdue, in red: due ones are
 * not being moved, no relay runs or it fails). Services whose metrics have no such figures are left out.
 */
function scheduledTable(services: readonly ServiceFigures[], now: number): Html {
  const rows = services.filter((s) => s.scheduled !== undefined);
  return html`<table aria-labelledby="scheduled">
    ${headRow(['Service', '#Waiting', 'Next due'])}
    <tbody>
      ${
        rows.length === 0
          ? html`<tr>
              <td colspan="3" class="muted">No scheduled-message figures yet.</td>
            </tr>`
          : ''
      }
      ${rows.map(({ service, scheduled }) => {
        const next = scheduled?.nextDueInSeconds;
        const at = next === undefined ? undefined : new Date(now + Math.round(next * 1000));
        return html`<tr data-scheduled="${service}">
          <td>${service}</td>
          <td class="num">${scheduled?.waiting ?? 0}</td>
          <td data-testid="next-due">
            ${at === undefined ? html`<span class="muted">none waiting</span>` : timeOf(at, now)}
            ${next !== undefined && next < 0 ? html` <strong class="bad">overdue</strong>` : ''}
          </td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}

/**
 * The overview an on-call engineer starts from: services up or down, DLQs with their oldest message's age
 * (each linked to its page), the outbox per destination and the consumer groups (rates per minute that
 * survive a service's restart), and the scheduled messages waiting with when the next is due. Refreshes itself.
 */
export function overviewPage(context: PageContext, overview: Overview): string {
  const { services, queues, queueError, now, trends } = overview;
  const destinations = services.flatMap((s) => s.destinations);
  const groups = services.flatMap((s) => s.groups);
  const queueOf = (group: string, destination: string) =>
    queues.find((q) => q.name === `${destination}.${group}.dlq`);
  return page(
    context,
    'Overview',
    html`<h2 id="services">Services</h2>
      ${servicesTable(context, services, now)}
      <h2 id="dlqs">Dead-letter queues</h2>
      ${queueError ? notice('error', queueError) : ''} ${queuesTable(context, queues, now, trends)}
      <h2 id="outbox">Outbox, per destination</h2>
      <table aria-labelledby="outbox">
        ${headRow(['Service', 'Destination', '#Pending', '#Oldest pending (s)', '#Published / min', '#Published (total)', 'Last hour'])}
        <tbody>
          ${
            destinations.length === 0
              ? html`<tr>
                  <td colspan="7" class="muted">No outbox figures yet.</td>
                </tr>`
              : ''
          }
          ${destinations.map((d) => {
            const of = (name: 'pending' | 'oldestPending' | 'publishedPerMinute') =>
              trends?.of(name, d.service, d.destination);
            return html`<tr data-destination="${d.destination}">
              <td>${d.service}</td>
              <td>${d.destination}</td>
              <td class="num">${d.pending}</td>
              <td class="num">${num(d.oldestPendingAgeSeconds, 1)}</td>
              <td class="num">${num(d.publishedPerMinute, 1)}</td>
              <td class="num">${d.publishedTotal}</td>
              ${trendCell(`${d.service} ${d.destination}`, [
                { caption: 'pending', trend: of('pending') },
                { caption: 'oldest pending (s)', trend: of('oldestPending') },
                { caption: 'published / min', trend: of('publishedPerMinute'), growthIsTrouble: false },
              ])}
            </tr>`;
          })}
        </tbody>
      </table>
      <h2 id="scheduled">Scheduled messages</h2>
      ${scheduledTable(services, now)}
      <h2 id="groups">Consumer groups</h2>
      <table aria-labelledby="groups">
        ${headRow(['Service', 'Group', 'Destination', '#Handled', '#Handled / min', '#Mean lag (s)', '#Duplicates', '#Retries', 'Failed attempts by category', '#Dead-lettered', '#DLQ depth', 'Last hour'])}
        <tbody>
          ${
            groups.length === 0
              ? html`<tr>
                  <td colspan="12" class="muted">No consumer figures yet.</td>
                </tr>`
              : ''
          }
          ${groups.map((g) => {
            const dlq = queueOf(g.group, g.destination);
            const of = (name: 'handledPerMinute' | 'meanLag') =>
              trends?.of(name, g.service, g.group, g.destination);
            return html`<tr data-group="${g.group}">
              <td>${g.service}</td>
              <td>${g.group}</td>
              <td>${g.destination}</td>
              <td class="num">${g.handled}</td>
              <td class="num">${num(g.handledPerMinute, 1)}</td>
              <td class="num">${num(g.meanLagSeconds, 2)}</td>
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
              <td class="num">${dlq ? queueLink(context, dlq.name, dlq.depth) : '–'}</td>
              ${trendCell(`${g.service} ${g.group} ${g.destination}`, [
                { caption: 'handled / min', trend: of('handledPerMinute'), growthIsTrouble: false },
                { caption: 'mean lag (s)', trend: of('meanLag') },
              ])}
            </tr>`;
          })}
        </tbody>
      </table>
      <p class="muted">
        Totals are since each service started; rates per minute are over the last readings (up to five
        minutes), a restart's reset included, and need readings a minute apart. Mean lag is from the event's
        commit to its handler starting, over the messages handled since the last reading. The small charts are
        the last hour as this console read it (readings 30 s apart and the latest, while the overview is open:
        a gap where nobody looked); "growing since" marks a backlog, age, lag or DLQ that rose at each of its
        last four readings.
      </p>`,
    '',
    { refresh: true },
  );
}
