import { now, sleep } from './time';

/**
 * Calls `send(i)` for i = 0..count-1 at `ratePerSecond`, the i-th at t0 + i/rate: a late timer makes the next
 * sends go at once, so the schedule never drifts. Sends overlap (each is awaited only at the end); a failed
 * send fails the whole offer once the others settled.
 */
export async function offerAtRate(
  count: number,
  ratePerSecond: number,
  send: (i: number) => Promise<void>,
  onProgress?: (sent: number) => void,
): Promise<void> {
  const started = now();
  const pending: Array<Promise<unknown>> = [];
  const errors: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const wait = started + (i * 1000) / ratePerSecond - now();
    if (wait >= 1) await sleep(wait);
    pending.push(send(i).catch((error: unknown) => errors.push(error)));
    if (i % 50 === 0) onProgress?.(i);
  }
  await Promise.all(pending);
  onProgress?.(count);
  if (errors.length > 0)
    throw new Error(`${errors.length} of ${count} sends failed; first: ${String(errors[0])}`);
}
