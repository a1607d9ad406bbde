/** The parts of Express's request cycle the filter uses. */
interface BodyRequest {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}
interface ErrorResponse {
  status(code: number): { json(body: unknown): void };
}

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;

/**
 * Refuses (415) a request body that is not JSON, before any parser reads it: the services take JSON only,
 * and Nest would otherwise parse form-encoded bodies by default (up to 100 kB, past the JSON limit and the
 * JSON guard). Requests without a body pass.
 */
export function jsonOnly() {
  return (request: BodyRequest, response: ErrorResponse, next: () => void): void => {
    const { headers } = request;
    const length = Number(headers['content-length'] ?? 0);
    const hasBody = length > 0 || headers['transfer-encoding'] !== undefined;
    const type = String(headers['content-type'] ?? '');
    if (!hasBody || JSON_TYPE.test(type)) return next();
    response.status(415).json({
      statusCode: 415,
      error: 'Unsupported Media Type',
      message: 'Send the request body as JSON (content-type: application/json).',
    });
  };
}
