import type { Clock } from '../../common/clock';
import type { DeadLetterQueueInfo } from '../../redrive/redrive-result';
import type { ServiceFigures } from '../console-metrics';
import { growingSince, ReadingWindow, ReadingWindowOptions, TrendSample } from './reading-window';

/** The overview's readings kept over time. */
export type TrendName =
  'pending' | 'oldestPending' | 'publishedPerMinute' | 'handledPerMinute' | 'meanLag' | 'dlqDepth';

/** One series as a chart draws it: its readings between `from` and `to`, and since when it grows, if it does. */
export interface Trend {
  readonly samples: readonly TrendSample[];
  /** The window's start and end (now), ms since the epoch: the chart's edges. */
  readonly from: number;
  readonly to: number;
  /** When its current rise began (`growingSince`); undefined when it does not grow. */
  readonly growingSince?: number;
}

/** The trends of one overview: a series by its name and what it is of (service and destination, group, DLQ). */
export interface OverviewTrends {
  of(name: TrendName, ...parts: readonly string[]): Trend | undefined;
}

/** What `ConsoleTrends` keeps: the window, and how many rises in a row make a series "growing". */
export interface ConsoleTrendsOptions extends ReadingWindowOptions {
  /** Readings in a row, each above the one before, that make a series growing. Default: 4 (2 min at 30 s). */
  readonly rises?: number;
}

const keyOf = (name: TrendName, parts: readonly string[]) => [name, ...parts].join('\u0000');

/**
 * The overview's figures over the last hour (`ReadingWindow`): per destination its backlog, oldest pending
 * age and publish rate; per consumer group its handling rate and mean lag; per DLQ its depth. Fed by each
 * read of the overview (its own refresh included); a service that is down adds no reading (a gap).
 */
export class ConsoleTrends {
  private readonly window: ReadingWindow;
  private readonly rises: number;

  constructor(
    private readonly clock: Pick<Clock, 'now'>,
    options: ConsoleTrendsOptions = {},
  ) {
    this.window = new ReadingWindow(clock, options);
    this.rises = options.rises ?? 4;
  }

  /** Records the overview's figures now; returns the trends to draw with them. */
  observe(services: readonly ServiceFigures[], queues: readonly DeadLetterQueueInfo[]): OverviewTrends {
    const readings: Array<[string, number | undefined]> = [];
    for (const { destinations, groups } of services) {
      for (const d of destinations) {
        const of = [d.service, d.destination];
        readings.push([keyOf('pending', of), d.pending]);
        readings.push([keyOf('oldestPending', of), d.oldestPendingAgeSeconds]);
        readings.push([keyOf('publishedPerMinute', of), d.publishedPerMinute]);
      }
      for (const g of groups) {
        const of = [g.service, g.group, g.destination];
        readings.push([keyOf('handledPerMinute', of), g.handledPerMinute]);
        readings.push([keyOf('meanLag', of), g.meanLagSeconds]);
      }
    }
    for (const q of queues) if (q.exists) readings.push([keyOf('dlqDepth', [q.name]), q.depth]);
    this.window.record(readings);
    return { of: (name, ...parts) => this.trend(keyOf(name, parts)) };
  }

  private trend(key: string): Trend | undefined {
    const samples = this.window.samples(key);
    if (samples.length === 0) return undefined;
    const to = this.clock.now();
    return { samples, from: this.window.from, to, growingSince: growingSince(samples, this.rises) };
  }
}
