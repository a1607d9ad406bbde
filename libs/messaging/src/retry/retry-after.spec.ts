import { RetryLaterError } from '../errors/retry-later.error';
import { requestedRetryDelay, retryAfter } from './retry-after';

const NOW = Date.parse('2026-12-01T00:00:00.000Z');

/** An error shaped as axios makes it for an HTTP answer (`response.status`, headers as a plain object). */
function axiosError(status: number, headers: Record<string, string>): Error {
  return Object.assign(new Error(`Request failed with status code ${status}`), {
    name: 'AxiosError',
    code: 'ERR_BAD_RESPONSE',
    response: { status, headers },
  });
}

/** AxiosHeaders and fetch's Headers: read through `get(name)`, without case. */
class HeadersWithGet {
  constructor(private readonly values: Record<string, string>) {}
  get(name: string): string | null {
    const key = Object.keys(this.values).find((k) => k.toLowerCase() === name.toLowerCase());
    return key === undefined ? null : this.values[key];
  }
}

describe('retry-after', () => {
  describe(requestedRetryDelay.name, () => {
    it("reads a RetryLaterError's delay, or the time left until its retryAt (0 once passed)", () => {
      expect(requestedRetryDelay(new RetryLaterError(2_500), NOW)).toBe(2_500);
      expect(requestedRetryDelay(new RetryLaterError(new Date(NOW + 10_000)), NOW)).toBe(10_000);
      expect(requestedRetryDelay(new RetryLaterError(new Date(NOW - 10_000)), NOW)).toBe(0);
    });

    it('reads an own retryAfterMs, when a finite number >= 0', () => {
      const own = (value: unknown) => Object.assign(new Error('throttled'), { retryAfterMs: value });
      expect(requestedRetryDelay(own(1_200), NOW)).toBe(1_200);
      expect(requestedRetryDelay(own(0), NOW)).toBe(0);
      for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, '1200', null]) {
        expect(requestedRetryDelay(own(bad), NOW)).toBeUndefined();
      }
    });

    it.each([429, 503])('reads Retry-After seconds from an axios error for a %i answer', (status) => {
      expect(requestedRetryDelay(axiosError(status, { 'retry-after': '7' }), NOW)).toBe(7_000);
    });

    it('reads an HTTP date (in the future: the time left; in the past: 0)', () => {
      const future = new Date(NOW + 90_000).toUTCString();
      const past = new Date(NOW - 90_000).toUTCString();
      expect(requestedRetryDelay(axiosError(429, { 'retry-after': future }), NOW)).toBe(90_000);
      expect(requestedRetryDelay(axiosError(503, { 'retry-after': past }), NOW)).toBe(0);
    });

    it('prefers retry-after-ms, in ms', () => {
      const error = axiosError(429, { 'retry-after-ms': '1500.2', 'retry-after': '9' });
      expect(requestedRetryDelay(error, NOW)).toBe(1_501);
    });

    it('reads headers through get() (AxiosHeaders, fetch Headers) and without case', () => {
      const withGet = Object.assign(new Error('x'), {
        response: { status: 429, headers: new HeadersWithGet({ 'Retry-After': '3' }) },
      });
      expect(requestedRetryDelay(withGet, NOW)).toBe(3_000);
      const capitalised = axiosError(429, { 'Retry-After': '4' });
      expect(requestedRetryDelay(capitalised, NOW)).toBe(4_000);
    });

    it("reads a fetch Response (ky's HTTPError, ofetch's FetchError)", () => {
      const response = new Response(null, { status: 503, headers: { 'Retry-After': '5' } });
      expect(requestedRetryDelay(Object.assign(new Error('HTTPError'), { response }), NOW)).toBe(5_000);
    });

    it("reads got's HTTPError (response.statusCode) and an error with its own status and headers", () => {
      const got = Object.assign(new Error('Response code 429'), {
        response: { statusCode: 429, headers: { 'retry-after': ['6', '60'] } },
      });
      expect(requestedRetryDelay(got, NOW)).toBe(6_000);
      const sdk = Object.assign(new Error('rate limited'), {
        status: 429,
        headers: new HeadersWithGet({ 'retry-after': '8' }),
      });
      expect(requestedRetryDelay(sdk, NOW)).toBe(8_000);
    });

    it('ignores Retry-After on answers other than 429 and 503, and errors without an answer', () => {
      for (const status of [200, 301, 400, 404, 500, 502, 504]) {
        expect(requestedRetryDelay(axiosError(status, { 'retry-after': '7' }), NOW)).toBeUndefined();
      }
      expect(requestedRetryDelay(new Error('ECONNRESET'), NOW)).toBeUndefined();
      expect(requestedRetryDelay('a string', NOW)).toBeUndefined();
      expect(requestedRetryDelay(undefined, NOW)).toBeUndefined();
    });

    it('ignores a missing or malformed Retry-After', () => {
      for (const value of ['', '-5', '1.5', 'soon', '5 seconds', '1e3', 'Wed, 99 Foo 2026 99:99:99 GMT']) {
        expect(requestedRetryDelay(axiosError(429, { 'retry-after': value }), NOW)).toBeUndefined();
      }
      expect(requestedRetryDelay(axiosError(429, {}), NOW)).toBeUndefined();
    });

    it('never throws on an error whose properties throw', () => {
      const hostile = new Proxy(new Error('x'), {
        get(target, key) {
          if (key === 'response') throw new Error('getter exploded');
          return Reflect.get(target, key) as unknown;
        },
      });
      expect(requestedRetryDelay(hostile, NOW)).toBeUndefined();
    });
  });

  describe(retryAfter.name, () => {
    it('caps absurd delta-seconds at a year', () => {
      expect(retryAfter('999999999999', NOW)).toBe(31_536_000_000);
    });
  });
});
