import { renderTable } from '../../../tools/demo/table';
import type { FaultProxyStats } from '../../harness/fault-proxy';
import { FaultRecord, seconds } from './fault-injector';
import { FaultKind, FaultProfile } from './fault-profile';
import { FaultVerdict } from './fault-verdict';

/** Everything a fault run reports beyond the verdict. */
export interface FaultRunFigures {
  readonly transport: 'kafka' | 'rabbitmq';
  /** `PostgreSQL` or `MariaDB`: where both services keep their tables. */
  readonly database: string;
  readonly profile: FaultProfile;
  readonly loadMs: number;
  readonly faults: readonly FaultRecord[];
  /** Deliveries the inbox recognised as handled already: from subscribe-service's log (every lifetime). */
  readonly suppressedFromLog: number;
  /** The same from /metrics, summed over lifetimes (a lower bound: a kill loses up to a second). */
  readonly suppressedFromMetrics: number;
  /** Log lines about a duplicate id carrying a different payload. */
  readonly differentPayloads: number;
  /** Messages in subscribe-service's dead-letter destination. */
  readonly deadLettered: number;
  /** From the end of the load until quiescence. */
  readonly quiescenceMs: number;
  readonly logDir: string;
  /** Chaos mode: what each link's fault proxy did. */
  readonly links?: ReadonlyArray<FaultProxyStats & { readonly name: string }>;
}

/** The longest recovery of the run, or undefined when some fault did not recover in time. */
export function longestRecovery(faults: readonly FaultRecord[]): number | undefined {
  if (faults.some((f) => f.recoveryMs === undefined)) return undefined;
  return Math.max(0, ...faults.map((f) => f.recoveryMs ?? 0));
}

/** The summary printed at the end of every fault run: the figures, then one line per fault. */
export function renderFaultSummary(verdict: FaultVerdict, figures: FaultRunFigures): string {
  const { profile } = figures;
  const byKind = new Map<FaultKind, number>();
  figures.faults.forEach((f) => byKind.set(f.kind, (byKind.get(f.kind) ?? 0) + 1));
  const refused = Object.entries(verdict.refused)
    .map(([status, n]) => `${n} × ${status}`)
    .join(', ');
  const longest = longestRecovery(figures.faults);
  const broker = figures.transport === 'kafka' ? 'Kafka' : 'RabbitMQ';
  const rows: string[][] = [
    ['', `${broker} on ${figures.database}, ${profile.name} (seed ${profile.seed})`],
    ['Load', `${seconds(figures.loadMs)}, ${profile.postsPerSecond}/s offered, ${profile.authors} authors`],
    ['POST /posts sent', String(verdict.requests)],
    ['  answered 201', String(verdict.created)],
    ['  refused (error status)', refused || '0'],
    ['  no answer (committed anyway)', `${verdict.unanswered} (${verdict.committedWithoutAnswer})`],
    ['Posts committed', String(verdict.committedPosts)],
    [
      'Faults injected',
      [...byKind].map(([kind, n]) => `${kind} × ${n}`).join(', ') + ' + a second relay throughout',
    ],
    ...(figures.links ?? []).map((link) => [
      `  proxy: ${link.name}`,
      `${link.connections} connections, ${link.cuts} cut, ${link.dropped} frames dropped, ` +
        `${link.delayed} delayed, ${link.swallowed} chunks swallowed`,
    ]),
    [
      'Notifications expected / delivered',
      `${verdict.expectedNotifications} / ${verdict.deliveredNotifications}`,
    ],
    ['Lost', String(verdict.lost.length)],
    ['Notifications duplicated', String(verdict.duplicatedNotifications.length)],
    ['Notifications without a committed post', String(verdict.orphanNotifications.length)],
    ['Left behind by failed requests', String(verdict.leftBehind.length)],
    ['Copies on the wire (distinct ids)', `${verdict.wire.copies} (${verdict.wire.distinct})`],
    ['Duplicates on the wire', String(verdict.wire.duplicates)],
    [
      'Duplicates suppressed by the inbox (log / metrics)',
      `${figures.suppressedFromLog} / ≥ ${figures.suppressedFromMetrics}`,
    ],
    ['Same id, different payload', String(figures.differentPayloads)],
    ['Dead-lettered', String(figures.deadLettered)],
    [
      'Out of order (wire / notifications)',
      `${verdict.wireOrderViolations.length} / ${verdict.notificationOrderViolations.length}`,
    ],
    ['Longest recovery', longest === undefined ? 'a fault did not recover in time' : seconds(longest)],
    ['Load end → quiescence', seconds(figures.quiescenceMs)],
  ];
  const faultRows = [
    ['Fault', 'at', 'down', 'recovery', 'detail'],
    ...figures.faults.map((f, i) => [
      `${i + 1}. ${f.kind} (${f.target})`,
      seconds(f.atMs),
      seconds(f.downMs),
      f.recoveryMs === undefined ? 'timeout' : seconds(f.recoveryMs),
      f.detail ?? '',
    ]),
  ];
  return `${renderTable(rows)}\n${renderTable(faultRows)}\nService logs: ${figures.logDir}\n`;
}
