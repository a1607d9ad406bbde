import { ConsoleTrends } from '../trends/overview-trends';
import { overviewPage } from './overview-views';

const context = {
  base: '/console',
  user: { name: 'victor', roles: ['viewer' as const] },
  csrfToken: 't',
  refreshSeconds: 30,
};
const now = Date.parse('2026-12-03T08:00:00.000Z');

describe(overviewPage.name, () => {
  const page = overviewPage(context, {
    now,
    services: [
      {
        service: 'post-service',
        lastUpAt: now,
        scheduled: { waiting: 3, nextDueInSeconds: 300 },
        destinations: [],
        groups: [],
      },
      {
        service: 'subscribe-service',
        error: 'no answer (ECONNREFUSED)',
        lastUpAt: now - 4 * 60_000,
        destinations: [],
        groups: [
          {
            service: 'subscribe-service',
            group: 'subscribe-service',
            destination: 'post-create',
            handled: 10,
            duplicates: 0,
            retries: 0,
            failedByCategory: {},
            deadLettered: 2,
            handledPerMinute: 2.5,
          },
        ],
      },
    ],
    queues: [
      {
        name: 'post-create.subscribe-service.dlq',
        exists: true,
        depth: 2,
        oldestParkedAt: '2026-12-03T07:56:00.000Z',
      },
      { name: 'empty.g.dlq', exists: true, depth: 0 },
    ],
  });

  it('says each service is up or down, and when a down one last answered', () => {
    expect(page).toMatch(/data-service="post-service" data-state="up"/);
    expect(page).toMatch(/data-service="subscribe-service" data-state="down"/);
    expect(page).toContain('no answer (ECONNREFUSED)');
    expect(page).toContain('last answered <time datetime="2026-12-03T07:56:00.000Z"');
    expect(page).toContain('07:56:00 UTC (4 min ago)');
  });

  it('gives each DLQ its oldest message’s age, and links DLQ rows and depths to the DLQ’s page', () => {
    expect(page).toContain(
      '<a href="/console/dead-letters/post-create.subscribe-service.dlq">post-create.subscribe-service.dlq</a>',
    );
    expect(page).toContain('<a href="/console/dead-letters/post-create.subscribe-service.dlq">2</a>');
    expect(page).toMatch(
      /data-testid="oldest"><time datetime="2026-12-03T07:56:00.000Z"[^>]*>2026-12-03 07:56:00 UTC \(4 min ago\)/,
    );
    expect(page).toContain('<td class="num">2.5</td>');
  });

  // claim: C-109
  it('shows each service’s scheduled messages: how many wait, when the next is due, and an overdue one', () => {
    expect(page).toMatch(
      /data-scheduled="post-service">\s*<td>post-service<\/td>\s*<td class="num">3<\/td>\s*<td data-testid="next-due">\s*<time datetime="2026-12-03T08:05:00.000Z"[^>]*>2026-12-03 08:05:00 UTC \(in 5 min\)/,
    );
    expect(page).not.toContain('data-scheduled="subscribe-service"'); // no figures: left out
    const other = (scheduled: { waiting: number; nextDueInSeconds?: number }) =>
      overviewPage(context, {
        now,
        queues: [],
        services: [{ service: 's', lastUpAt: now, destinations: [], groups: [], scheduled }],
      });
    expect(other({ waiting: 0 })).toMatch(
      /<td class="num">0<\/td>\s*<td data-testid="next-due">\s*<span class="muted">none waiting/,
    );
    expect(other({ waiting: 1, nextDueInSeconds: -120 })).toMatch(
      /07:58:00 UTC \(2 min ago\)<\/time>\s*<strong class="bad">overdue<\/strong>/,
    );
    expect(overviewPage(context, { now, queues: [], services: [] })).toContain(
      'No scheduled-message figures yet.',
    );
  });

  it('draws each DLQ, destination and group over the last hour, and says since when a DLQ grows', () => {
    let at = now - 3 * 60_000;
    const trends = new ConsoleTrends({ now: () => at }, { rises: 3 });
    const destination = { service: 'post-service', destination: 'post-create', oldestPendingAgeSeconds: 2 };
    const services = (pending: number) => [
      {
        service: 'post-service',
        lastUpAt: at,
        destinations: [{ ...destination, pending, publishedTotal: 1, publishedPerMinute: 4 }],
        groups: [],
      },
    ];
    let seen = trends.observe([], []);
    for (const depth of [1, 2, 4, 7]) {
      seen = trends.observe(services(depth * 10), [{ name: 'orders.g.dlq', exists: true, depth }]);
      at += 60_000;
    }
    at -= 60_000;
    const charted = overviewPage(context, {
      now: at,
      services: services(70),
      queues: [{ name: 'orders.g.dlq', exists: true, depth: 7 }],
      trends: seen,
    });
    expect(charted).toMatch(/<th scope="col">Last hour<\/th>/);
    const dlqRow = /<tr data-queue="orders.g.dlq">[\s\S]*?<\/tr>/.exec(charted)?.[0] ?? '';
    expect(dlqRow).toMatch(
      /<svg\s+class="spark"[^>]*aria-label="orders.g.dlq: waiting, last 60 min: 1 to 7, now 7"/,
    );
    expect(dlqRow).toContain('growing since <time datetime="2026-12-03T07:57:00.000Z"');
    expect(dlqRow).toContain('>07:57 UTC</time>');
    const outboxRow = /<tr data-destination="post-create">[\s\S]*?<\/tr>/.exec(charted)?.[0] ?? '';
    expect(outboxRow.match(/<svg/g)).toHaveLength(3);
    expect(outboxRow.match(/growing since/g)).toHaveLength(1); // pending; not the flat age, never the rate
    expect(page).not.toContain('<svg'); // no trends given: no charts
  });

  it('refreshes itself, with the console’s own script and no inline script', () => {
    expect(page).toContain('<main id="main" data-refresh="30">');
    expect(page).toContain('<script src="/console/assets/console.js" defer></script>');
    expect(page.match(/<script/g)).toHaveLength(1);
  });
});
