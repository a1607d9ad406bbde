import { InvalidScheduleError } from '../errors/invalid-schedule.error';

/**
 * The furthest ahead a message may be scheduled: about ten years. Further is taken for a unit mistake (seconds
 * given as milliseconds since the epoch, a year 20260) rather than a plan.
 */
export const MAX_SCHEDULE_AHEAD_MS = 3_653 * 24 * 60 * 60 * 1000;

/**
 * Up to how many waiting scheduled messages the metrics count exactly; above, they give the database's own
 * estimate, so that a scrape's cost does not grow with the backlog (a `count(*)` of 100,000 rows took 60 to
 * 95 ms).
 */
export const SCHEDULED_EXACT_COUNT_LIMIT = 10_000;

/**
 * When a scheduled message is due: an absolute time (`deliverAt`, compared with the database's clock) or a
 * delay counted from the database's clock when the row is written (`delayMs`). Exactly one is set.
 */
export type Schedule = { readonly deliverAt: Date } | { readonly delayMs: number };

/**
 * The schedule `add()` was asked for, checked; undefined when the message is not scheduled (neither option, a
 * `delayMs` of 0, or a `deliverAt` that is not after `nowMs`: a time in the past means now).
 */
export function resolveSchedule(
  eventType: string,
  options: { readonly deliverAt?: unknown; readonly delayMs?: unknown },
  nowMs: number,
): Schedule | undefined {
  const { deliverAt, delayMs } = options;
  if (deliverAt !== undefined && delayMs !== undefined) {
    throw new InvalidScheduleError(eventType, 'give deliverAt or delayMs, not both.');
  }
  if (deliverAt !== undefined) {
    if (!(deliverAt instanceof Date) || !Number.isFinite(deliverAt.getTime())) {
      throw new InvalidScheduleError(eventType, `deliverAt must be a valid Date, got ${show(deliverAt)}.`);
    }
    const ahead = deliverAt.getTime() - nowMs;
    if (ahead > MAX_SCHEDULE_AHEAD_MS) throw tooFar(eventType, `deliverAt ${deliverAt.toISOString()}`);
    return ahead > 0 ? { deliverAt } : undefined;
  }
  if (delayMs !== undefined) {
    if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) {
      throw new InvalidScheduleError(
        eventType,
        `delayMs must be a finite number of milliseconds, 0 or more, got ${show(delayMs)}.`,
      );
    }
    if (delayMs > MAX_SCHEDULE_AHEAD_MS) throw tooFar(eventType, `delayMs ${delayMs}`);
    const whole = Math.ceil(delayMs);
    return whole > 0 ? { delayMs: whole } : undefined;
  }
  return undefined;
}

/**
 * The scheduled messages to report from an exact count of at most `SCHEDULED_EXACT_COUNT_LIMIT + 1` rows and
 * the database's estimate: the count when it stayed within the limit, else the estimate (never below the
 * count: an estimate the statistics have not caught up with yet, or none, says at least that many).
 */
export function beyondExact(counted: number, estimate: number | undefined): number {
  if (counted <= SCHEDULED_EXACT_COUNT_LIMIT) return counted;
  return Math.max(counted, Math.round(estimate ?? 0));
}

function tooFar(eventType: string, what: string): InvalidScheduleError {
  return new InvalidScheduleError(
    eventType,
    `${what} is more than ten years ahead (MAX_SCHEDULE_AHEAD_MS); was it given in the wrong unit?`,
  );
}

function show(value: unknown): string {
  if (value instanceof Date) return 'an invalid Date';
  if (typeof value === 'string') return `the string '${value.slice(0, 40)}'`;
  if (typeof value === 'number') return String(value);
  return typeof value;
}
