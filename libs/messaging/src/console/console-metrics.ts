import { Clock, systemClock } from '../common/clock';
import { ConsoleMetricsSource } from './console-options.interface';
import { CounterHistory } from './counter-rate';
import { MeanLag } from './trends/mean-lag';

/** One sample of a Prometheus text exposition. */
export interface MetricSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the Prometheus text format (the samples only; comments and types are skipped). */
export function parseMetrics(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split('\n')) {
    const match = LINE.exec(line.trim());
    if (!match || line.startsWith('#')) continue;
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? '').matchAll(LABEL)) {
      labels[key] = raw.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    const value = Number(match[3]);
    if (!Number.isNaN(value)) samples.push({ name: match[1], labels, value });
  }
  return samples;
}

/** Per destination, what the outbox holds and publishes. */
export interface DestinationFigures {
  readonly service: string;
  readonly destination: string;
  readonly pending: number;
  readonly oldestPendingAgeSeconds: number;
  readonly publishedTotal: number;
  /**
   * Published per minute over the last readings (a restart's reset counted as Prometheus's `rate()` does);
   * undefined until readings span a minute.
   */
  readonly publishedPerMinute?: number;
}

/** Per consumer group and destination, what its consumer did (counters since the service started). */
export interface GroupFigures {
  readonly service: string;
  readonly group: string;
  readonly destination: string;
  readonly handled: number;
  readonly duplicates: number;
  readonly retries: number;
  readonly failedByCategory: Readonly<Record<string, number>>;
  readonly deadLettered: number;
  /** Handled per minute over the last readings, resets included; undefined until readings span a minute. */
  readonly handledPerMinute?: number;
  /** `messaging_consumer_lag_seconds`' sum and count (since the service started), when it reports them. */
  readonly lag?: { readonly sumSeconds: number; readonly count: number };
  /** Mean lag, seconds, of the messages handled since the last reading (`MeanLag`); undefined if none. */
  readonly meanLagSeconds?: number;
}

/** A service's scheduled messages (`add(…, { delayMs | deliverAt })`), as its database holds them. */
export interface ScheduledFigures {
  /** Scheduled messages waiting to be due (`messaging_outbox_scheduled`). */
  readonly waiting: number;
  /**
   * Seconds until the next is due, negative when overdue (`messaging_outbox_next_scheduled_due_seconds`);
   * undefined when none waits.
   */
  readonly nextDueInSeconds?: number;
}

/** What the overview shows of one service, or why it could not be read. */
export interface ServiceFigures {
  readonly service: string;
  /** Why it could not be read: the service is down (or its metrics are). */
  readonly error?: string;
  /** When it last answered, ms since the epoch (now, when it is up); undefined if it never did. */
  readonly lastUpAt?: number;
  readonly destinations: readonly DestinationFigures[];
  readonly groups: readonly GroupFigures[];
  /** Its scheduled messages; undefined when its metrics have none (a version before scheduled delivery). */
  readonly scheduled?: ScheduledFigures;
}

const sum = (samples: readonly MetricSample[], name: string, match: Record<string, string>): number =>
  samples
    .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
    .reduce((total, s) => total + s.value, 0);

/** Turns one service's samples into the overview's figures. */
export function figuresOf(service: string, samples: readonly MetricSample[]): ServiceFigures {
  const destinations = new Set(
    samples
      .filter((s) => s.name.startsWith('messaging_outbox_') && s.labels.destination)
      .map((s) => s.labels.destination),
  );
  const groups = new Map<string, { group: string; destination: string }>();
  for (const s of samples) {
    if (s.name.startsWith('messaging_') && s.labels.group && s.labels.destination) {
      groups.set(
        `${s.labels.group}\u0000${s.labels.destination}`,
        s.labels as { group: string; destination: string },
      );
    }
  }
  const waiting = samples.find((s) => s.name === 'messaging_outbox_scheduled');
  const nextDue = samples.find((s) => s.name === 'messaging_outbox_next_scheduled_due_seconds');
  return {
    service,
    ...(waiting && {
      scheduled: { waiting: waiting.value, ...(nextDue && { nextDueInSeconds: nextDue.value }) },
    }),
    destinations: [...destinations].sort().map((destination) => ({
      service,
      destination,
      pending: sum(samples, 'messaging_outbox_pending', { destination }),
      oldestPendingAgeSeconds: sum(samples, 'messaging_outbox_oldest_pending_age_seconds', { destination }),
      publishedTotal: sum(samples, 'messaging_outbox_published_total', { destination }),
    })),
    groups: [...groups.values()].map(({ group, destination }) => {
      const of = { group, destination };
      const failedByCategory: Record<string, number> = {};
      for (const s of samples) {
        if (
          s.name === 'messaging_consumer_failed_attempts_total' &&
          s.labels.group === group &&
          s.labels.destination === destination
        ) {
          failedByCategory[s.labels.category ?? '?'] =
            (failedByCategory[s.labels.category ?? '?'] ?? 0) + s.value;
        }
      }
      const lagCount = samples.find(
        (s) =>
          s.name === 'messaging_consumer_lag_seconds_count' &&
          s.labels.group === group &&
          s.labels.destination === destination,
      );
      return {
        service,
        group,
        destination,
        ...(lagCount && {
          lag: { sumSeconds: sum(samples, 'messaging_consumer_lag_seconds_sum', of), count: lagCount.value },
        }),
        handled: sum(samples, 'messaging_consumer_messages_total', { ...of, outcome: 'handled' }),
        duplicates: sum(samples, 'messaging_consumer_messages_total', { ...of, outcome: 'duplicate' }),
        retries: sum(samples, 'messaging_consumer_retries_total', of),
        failedByCategory,
        deadLettered: sum(samples, 'messaging_dead_lettered_total', of),
      };
    }),
  };
}

/**
 * Reads the services' `/metrics` for the overview: each service up (it answered) or down (why, and when it
 * last answered), and rates per minute of its counters over the last readings (`CounterHistory`: a counter
 * that fell, because the service restarted, counts from 0 again, as Prometheus's `rate()` does).
 */
export class ConsoleMetrics {
  private readonly counters = new CounterHistory();
  private readonly lags = new MeanLag();
  private readonly lastUp = new Map<string, number>();

  constructor(
    private readonly sources: readonly ConsoleMetricsSource[],
    private readonly now: () => number,
    private readonly fetchText: (url: string) => Promise<string> = fetchMetricsText,
  ) {}

  /** Every source's figures; a source that does not answer is listed with its error. */
  async read(): Promise<ServiceFigures[]> {
    return Promise.all(
      this.sources.map(async (source) => {
        try {
          const figures = figuresOf(source.name, parseMetrics(await this.fetchText(source.url)));
          const now = this.now();
          this.lastUp.set(source.name, now);
          return {
            ...figures,
            lastUpAt: now,
            destinations: figures.destinations.map((d) => ({
              ...d,
              publishedPerMinute: this.counters.read(
                `published\u0000${d.service}\u0000${d.destination}`,
                d.publishedTotal,
                now,
              ),
            })),
            groups: figures.groups.map((g) => {
              const key = `${g.service}\u0000${g.group}\u0000${g.destination}`;
              return {
                ...g,
                handledPerMinute: this.counters.read(`handled\u0000${key}`, g.handled, now),
                meanLagSeconds: g.lag && this.lags.read(key, g.lag.sumSeconds, g.lag.count),
              };
            }),
          };
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          const lastUpAt = this.lastUp.get(source.name);
          return { service: source.name, error: message, lastUpAt, destinations: [], groups: [] };
        }
      }),
    );
  }
}

/** How the overview reads a `/metrics`: at most this long, this many bytes, no redirect followed. */
export const METRICS_FETCH = { timeoutMs: 3_000, maxBytes: 4 * 1024 * 1024 } as const;

/**
 * Reads a service's `/metrics`: a redirect is refused, not followed (it could lead the console, inside the
 * network, anywhere), and reading stops past `maxBytes`. Errors say what happened in a few words, never
 * the URL or a library's message (viewers see them). The deadline runs on `clock`.
 */
export async function fetchMetricsText(
  url: string,
  limits: { timeoutMs: number; maxBytes: number } = METRICS_FETCH,
  clock: Pick<Clock, 'setTimeout'> = systemClock,
): Promise<string> {
  const controller = new AbortController();
  const cancel = clock.setTimeout(() => controller.abort(), limits.timeoutMs);
  try {
    let response: Response;
    try {
      response = await fetch(url, { redirect: 'manual', signal: controller.signal });
    } catch (error) {
      const code = (error as { cause?: { code?: unknown } }).cause?.code;
      throw new Error(
        controller.signal.aborted
          ? 'no answer in time'
          : `no answer${typeof code === 'string' ? ` (${code})` : ''}`,
      );
    }
    if (response.status >= 300 && response.status < 400) {
      throw new Error(`answered ${response.status}, a redirect (not followed)`);
    }
    if (!response.ok) throw new Error(`answered ${response.status}`);
    return await readAtMost(response, limits.maxBytes, controller);
  } finally {
    cancel();
  }
}

async function readAtMost(
  response: Response,
  maxBytes: number,
  controller: AbortController,
): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    controller.abort();
    throw new Error(`sent more than ${maxBytes} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += (chunk as Uint8Array).byteLength;
    if (size > maxBytes) {
      controller.abort();
      throw new Error(`sent more than ${maxBytes} bytes`);
    }
    chunks.push(Buffer.from(chunk as Uint8Array));
  }
  return Buffer.concat(chunks).toString('utf8');
}
