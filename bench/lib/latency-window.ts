import { HandlerProbe } from './handler-probe';
import { offerAtRate } from './offered-load';
import { now, sleep } from './time';

/** What one latency window measures: commit (or confirm) → handler start per message, and the rate achieved. */
export interface LatencyWindow {
  readonly latencies: number[];
  /** Messages per second the writer committed (first to last commit). */
  readonly achieved: number;
  /** Messages that had not reached the handler when the run gave up waiting (a peer's only; else it throws). */
  readonly missing: number;
}

/** How long a window lasts, and what it does when messages do not arrive. */
export interface LatencyWindowOptions {
  readonly windowMs: number;
  /** Messages at most, whatever the rate and window. */
  readonly maxMessages: number;
  /** Give up waiting this long after the last message that arrived. */
  readonly stallMs: number;
  /** A peer's missing messages are counted (`missing`), ours throw. */
  readonly tolerateMissing: boolean;
  readonly onProgress?: (done: number, count: number) => void;
}

/**
 * Offers `rate` messages per second for the window (`place(run, seq)`, its commit time taken when it
 * resolves) and waits for the consumer's handler to start on each (`probe`, on this process's clock).
 */
export async function latencyWindow(
  place: (run: string, seq: number) => Promise<void>,
  probe: HandlerProbe,
  run: string,
  rate: number,
  options: LatencyWindowOptions,
): Promise<LatencyWindow> {
  const count = Math.min(options.maxMessages, Math.max(20, Math.round((rate * options.windowMs) / 1000)));
  const commits = new Map<number, number>();
  await offerAtRate(count, rate, async (seq) => {
    await place(run, seq);
    commits.set(seq, now());
  });
  try {
    await probe.waitFor(run, count, options.stallMs, (done) => options.onProgress?.(done, count));
  } catch (error) {
    if (!options.tolerateMissing) throw error;
  }
  const starts = probe.startsOf(run);
  const missing = count - starts.size;
  const times = [...commits.values()];
  probe.forget(run);
  await sleep(200);
  return {
    latencies: [...commits].flatMap(([seq, at]) => {
      const started = starts.get(seq);
      return started === undefined ? [] : [started - at];
    }),
    achieved: ((count - 1) * 1000) / Math.max(1, Math.max(...times) - Math.min(...times)),
    missing,
  };
}
