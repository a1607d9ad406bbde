/**
 * Reading what a thrown value carries without trusting its shape: the classifier and the retry-after reader
 * look at errors of libraries the library does not know (HTTP clients, drivers) through these.
 */

/** `value[key]` when `value` is an object, else undefined. */
export function property(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

/**
 * The HTTP status an error carries: its own `status` or `statusCode` (Nest's `HttpException`, ofetch,
 * superagent), or its response's (`response.status`: axios, ky and other fetch-based clients;
 * `response.statusCode`: got). Only an integer from 100 to 599 counts.
 */
export function httpStatus(error: unknown): number | undefined {
  const response = property(error, 'response');
  for (const status of [
    property(error, 'status'),
    property(error, 'statusCode'),
    property(response, 'status'),
    property(response, 'statusCode'),
  ]) {
    if (typeof status === 'number' && Number.isInteger(status) && status >= 100 && status <= 599) {
      return status;
    }
  }
  return undefined;
}
