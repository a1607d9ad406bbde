import * as http from 'node:http';

/** A plain HTTP answer. */
export interface HttpAnswer {
  readonly status: number;
  readonly contentType?: string;
  readonly text: string;
}

/**
 * One HTTP request on a connection of its own (no keep-alive pool that would hold the process open after
 * the demo or a test is done). A body goes as JSON unless `headers` say otherwise. Rejects on a network
 * error or after `timeoutMs`.
 */
export function httpRequest(
  method: string,
  url: string,
  body?: string,
  timeoutMs = 10_000,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method,
        agent: false,
        timeout: timeoutMs,
        headers:
          body === undefined
            ? headers
            : {
                'content-type': 'application/json',
                'content-length': Buffer.byteLength(body),
                ...headers,
              },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            contentType: response.headers['content-type'],
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    request.on('timeout', () =>
      request.destroy(new Error(`no answer from ${method} ${url} within ${timeoutMs} ms`)),
    );
    request.on('error', reject);
    request.end(body);
  });
}
