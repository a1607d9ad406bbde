import { Audience, DeliveryCheck, percentile, statusSummary } from './blog-scenario';
import { DemoOptions } from './demo-options';
import { ScenarioResult } from './demo-scenarios';
import { duration, seconds } from './format';
import { colours, Progress } from './progress';
import { renderTable } from './table';

const c = colours();

/** The summary table, then every subscriber's notifications per scenario. */
export function printSummary(
  options: DemoOptions,
  audience: Audience,
  scenarios: readonly ScenarioResult[],
  final: DeliveryCheck,
  out: Progress,
): void {
  const dash = '–';
  const row = (label: string, cell: (s: ScenarioResult) => string) => [label, ...scenarios.map(cell)];
  const latency = (s: ScenarioResult) => {
    const all = s.delivery.perSubscriber.flatMap((d) => d.latenciesMs);
    return `${duration(percentile(all, 50))} / ${duration(percentile(all, 99))}`;
  };
  const perSubscriber = (s: ScenarioResult) => {
    const full = s.delivery.perSubscriber.filter((d) => d.received === d.expected).length;
    const counts = [...new Set(s.delivery.perSubscriber.map((d) => d.received))].sort((a, b) => a - b);
    return `${counts.join('–')}/${s.burst.postIds.length} (${full} of ${audience.subscriberIds.length} complete)`;
  };
  const database = options.database === 'mariadb' ? ', MariaDB' : '';
  out.line(c.bold(`Summary (${options.transport === 'kafka' ? 'Kafka' : 'RabbitMQ'}${database})`));
  out.line(
    renderTable([
      ['', ...scenarios.map((s) => s.title)],
      row('POST /posts answers', (s) => statusSummary(s.burst.results)),
      row(
        'Posts sent within / answered within',
        (s) => `${seconds(s.burst.sentWithinMs)} / ${seconds(s.burst.answeredWithinMs)}`,
      ),
      row('Messages published (broker-confirmed)', (s) => String(s.published)),
      row('Notifications per subscriber', perSubscriber),
      row('Missing / twice', (s) => {
        const missing = s.delivery.perSubscriber.reduce((n, d) => n + d.missing.length, 0);
        const twice = s.delivery.perSubscriber.reduce((n, d) => n + d.twice.length, 0);
        return `${missing} / ${twice}`;
      }),
      row('Duplicates suppressed by the inbox', (s) => String(s.duplicates)),
      row('Delivered while the broker was down', (s) =>
        s.outage ? `${s.outage.deliveredWhileDown}/${s.delivery.expected}` : dash,
      ),
      row(
        options.relay === 'logical' ? 'Held by the relay while down' : 'Held in the outbox while down',
        (s) => (s.outage ? String(s.outage.pendingWhileDown) : dash),
      ),
      row('Broker stop / start took', (s) =>
        s.outage ? `${seconds(s.outage.stopMs)} / ${seconds(s.outage.startMs)}` : dash,
      ),
      row('Broker restart → full delivery', (s) => (s.outage ? duration(s.toFullDeliveryMs) : dash)),
      row('First post → full delivery', (s) => (s.outage ? dash : duration(s.toFullDeliveryMs))),
      row('Commit → notification p50 / p99', latency),
    ]),
  );
  out.line(
    renderTable([
      ['Subscriber', ...scenarios.map((s) => s.title), 'all posts', 'twice'],
      ...final.perSubscriber.map((d, i) => [
        String(d.subscriberId),
        ...scenarios.map((s) => `${s.delivery.perSubscriber[i].received}/${s.burst.postIds.length}`),
        `${d.received}/${d.expected}`,
        String(d.twice.length),
      ]),
    ]),
  );
}

/** Why the run failed: request problems, and each subscriber that misses or repeats notifications. */
export function failureReasons(final: DeliveryCheck, requestsOk: boolean): string[] {
  const reasons: string[] = [];
  if (!requestsOk) reasons.push('some POST /posts did not answer 201');
  for (const d of final.perSubscriber) {
    if (d.missing.length > 0)
      reasons.push(`subscriber ${d.subscriberId} misses ${d.missing.length} notifications`);
    if (d.twice.length > 0)
      reasons.push(`subscriber ${d.subscriberId} got ${d.twice.length} notifications twice`);
  }
  return reasons;
}
