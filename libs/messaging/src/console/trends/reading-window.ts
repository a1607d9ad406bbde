import type { Clock } from '../../common/clock';

/** One reading of a series: when, and its value. */
export interface TrendSample {
  /** When it was read, ms since the epoch. */
  readonly at: number;
  readonly value: number;
}

/** How much a `ReadingWindow` keeps. */
export interface ReadingWindowOptions {
  /** How far back readings are kept, ms. Default: 60 minutes. */
  readonly windowMs?: number;
  /** At most one reading per series per this many ms (more frequent refreshes add nothing). Default: 30 s. */
  readonly stepMs?: number;
  /** Series kept at most (new ones past it are not recorded). Default: 1,000. */
  readonly maxSeries?: number;
}

/** A series' readings a step apart, and the latest one when it came less than a step after them. */
interface Series {
  readonly kept: TrendSample[];
  latest?: TrendSample;
}

/**
 * The last `windowMs` of readings of many series (backlog, ages, rates, DLQ depths), in memory and bounded:
 * readings kept a `stepMs` apart at least, so at most `windowMs / stepMs + 1` each, and the latest reading
 * when it came sooner (a chart ends with what the table beside it says); at most `maxSeries` series; a
 * series with no reading left in the window is dropped. Readings come in when the overview is read
 * (its own refresh included), so a window nobody looked at has gaps; time is the injected clock's.
 */
export class ReadingWindow {
  private readonly series = new Map<string, Series>();
  private readonly windowMs: number;
  private readonly stepMs: number;
  private readonly maxSeries: number;

  constructor(
    private readonly clock: Pick<Clock, 'now'>,
    options: ReadingWindowOptions = {},
  ) {
    this.windowMs = options.windowMs ?? 60 * 60_000;
    this.stepMs = options.stepMs ?? 30_000;
    this.maxSeries = options.maxSeries ?? 1_000;
  }

  /** Records one reading of each series now (undefined values, e.g. a rate not known yet, are skipped). */
  record(readings: Iterable<readonly [key: string, value: number | undefined]>): void {
    const now = this.clock.now();
    this.prune(now);
    for (const [key, value] of readings) {
      if (value === undefined || !Number.isFinite(value)) continue;
      const series = this.series.get(key);
      if (!series) {
        if (this.series.size < this.maxSeries) this.series.set(key, { kept: [{ at: now, value }] });
      } else if (now - series.kept[series.kept.length - 1].at >= this.stepMs) {
        series.kept.push({ at: now, value });
        series.latest = undefined;
      } else {
        series.latest = { at: now, value };
      }
    }
  }

  /** A series' readings in the window, oldest first (empty if none). */
  samples(key: string): readonly TrendSample[] {
    const from = this.clock.now() - this.windowMs;
    const series = this.series.get(key);
    if (!series) return [];
    const all = series.latest ? [...series.kept, series.latest] : series.kept;
    return all.filter((s) => s.at >= from);
  }

  /** Where the window starts now, ms since the epoch (a chart's left edge). */
  get from(): number {
    return this.clock.now() - this.windowMs;
  }

  /** How many series are kept. */
  get size(): number {
    return this.series.size;
  }

  private prune(now: number): void {
    const from = now - this.windowMs;
    for (const [key, series] of this.series) {
      const first = series.kept.findIndex((s) => s.at >= from);
      series.kept.splice(0, first === -1 ? series.kept.length : first);
      if (series.kept.length > 0) continue;
      // Only the latest reading may be left: it becomes the first kept one (or the series goes).
      if (series.latest && series.latest.at >= from) series.kept.push(series.latest);
      else this.series.delete(key);
      series.latest = undefined;
    }
  }
}

/**
 * Since when `samples` (oldest first) grow: undefined unless each of the last `rises` readings rose above
 * the one before (a backlog that stopped growing, or grows too slowly to show between readings, is not
 * called growing). Then the start of the rise: followed back over readings that did not fall (a pause in
 * the growth does not restart it), without the flat stretch before it.
 */
export function growingSince(samples: readonly TrendSample[], rises = 4): number | undefined {
  const last = samples.length - 1;
  if (rises < 1 || last < rises) return undefined;
  for (let i = last - rises + 1; i <= last; i++) {
    if (!(samples[i].value > samples[i - 1].value)) return undefined;
  }
  let start = last - rises;
  while (start > 0 && samples[start - 1].value <= samples[start].value) start--;
  while (start < last && samples[start + 1].value === samples[start].value) start++;
  return samples[start].at;
}
