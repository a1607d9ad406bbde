/** A figure measured over several runs: the median and the spread (min–max) of the runs' values. */
export interface Summary {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** Each run's value, in the order measured. */
  readonly values: readonly number[];
}

/** The median and min–max of `values` (one per run). */
export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, values: [] };
  return {
    median: percentile(values, 50),
    min: Math.min(...values),
    max: Math.max(...values),
    values: [...values],
  };
}

/** The p-th percentile (nearest rank) of `values`. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  if (p === 50 && sorted.length % 2 === 0) {
    const mid = sorted.length / 2;
    return (sorted[mid - 1] + sorted[mid]) / 2;
  }
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** ours / baseline, or NaN when the baseline is 0 or missing. */
export function ratio(ours: number, baseline: number): number {
  return baseline > 0 && Number.isFinite(baseline) ? ours / baseline : Number.NaN;
}
