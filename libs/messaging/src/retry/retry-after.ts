import { RetryLaterError } from '../errors/retry-later.error';
import { httpStatus, property } from './error-shape';

/** The HTTP answers whose `Retry-After` a failed handler's error passes on: Too Many Requests, Service Unavailable. */
export const RETRY_AFTER_STATUSES: readonly number[] = [429, 503];

/** A `Retry-After` of more seconds than this is read as this many (the policy caps it far lower anyway). */
const MAX_RETRY_AFTER_SECONDS = 31_536_000; // a year

/**
 * The delay a failed handler's error asks for before the next try, in ms from `now`, or undefined when it asks
 * for none. Recognised, in this order:
 * - a `RetryLaterError`: its delay, or the time left until its `retryAt` (0 when that has passed);
 * - an own `retryAfterMs` property, a finite number >= 0 (your own errors, or a client's that sets it);
 * - an HTTP client's error for a 429 or 503 answer (status as `httpStatus` reads it) whose headers
 *   (`response.headers`, else the error's own `headers`; a plain object, or anything with `get(name)` such as
 *   fetch's `Headers` and axios' `AxiosHeaders`) carry `retry-after-ms` (ms, a number >= 0) or `Retry-After`,
 *   as delta-seconds or an HTTP date (a date in the past means now).
 * Anything else, malformed values included, asks for nothing. Never throws: it reads errors it does not know.
 * Pure: the caller passes the time.
 */
export function requestedRetryDelay(error: unknown, now: number): number | undefined {
  try {
    if (error instanceof RetryLaterError) return error.delayFrom(now);
    const own = property(error, 'retryAfterMs');
    if (typeof own === 'number' && Number.isFinite(own) && own >= 0) return own;
    const status = httpStatus(error);
    if (status === undefined || !RETRY_AFTER_STATUSES.includes(status)) return undefined;
    const headers = property(property(error, 'response'), 'headers') ?? property(error, 'headers');
    return milliseconds(header(headers, 'retry-after-ms')) ?? retryAfter(header(headers, 'retry-after'), now);
  } catch {
    return undefined; // a getter that throws, a hostile proxy: no delay asked for
  }
}

/**
 * A `Retry-After` value (RFC 9110 §10.2.3) in ms from `now`: delta-seconds (digits only), or an HTTP date
 * (0 when it has passed). Undefined when it is neither.
 */
export function retryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,12}$/.test(text)) return Math.min(Number(text), MAX_RETRY_AFTER_SECONDS) * 1000;
  // An HTTP date names its weekday and zone ("Wed, 21 Oct 2015 07:28:00 GMT"); refuse bare numbers and the like.
  if (!/^[A-Za-z]{3},? .*\d{2}:\d{2}:\d{2} (GMT|UTC)$/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function milliseconds(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,15}(\.\d+)?$/.test(value.trim())) return undefined;
  return Math.ceil(Number(value.trim()));
}

/** A header's first value, by name without case, from a plain object or anything with `get(name)`. */
function header(headers: unknown, name: string): string | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  const get = property(headers, 'get');
  let value: unknown;
  if (typeof get === 'function') {
    value = (get as (this: unknown, name: string) => unknown).call(headers, name);
  } else {
    const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : (headers as Record<string, unknown>)[key];
  }
  if (Array.isArray(value)) value = value[0];
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' ? value : undefined;
}
