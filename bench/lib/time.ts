import { performance } from 'node:perf_hooks';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Milliseconds on the clock every scenario measures with: monotonic within a process, and since it counts
 * from the process's time origin on the wall clock, comparable between processes of this machine (the
 * latency runs' consumer runs in a process of its own; `ProbeProcess` measures the residual offset).
 */
export const now = (): number => performance.timeOrigin + performance.now();

/** Rejects with `what` when `promise` has not settled within `ms`. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once `done()` holds (looked at every 50 ms), or after `ms` whether it holds or not. */
export async function until(done: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await sleep(50);
}
