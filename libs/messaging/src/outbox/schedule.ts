import { InvalidScheduleError } from '../errors/invalid-schedule.error';

/**
 * The furthest ahead a message may be scheduled: about ten years. Further is taken for a unit mistake (seconds
 * given as milliseconds since the epoch, a year 20260) rather than a plan.
 */
export const MAX_SCHEDULE_AHEAD_MS = 3_653 * 24 * 60 * 60 * 1000;

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
