/** The parts of Express's request cycle the handler uses (the app does not depend on Express's types). */
interface ErrorResponse {
  status(code: number): { json(body: unknown): void };
}

/** What the body parser attaches to the errors it raises. */
interface BodyParserError {
  readonly type?: string;
}

/**
 * Answers the body parser's errors as JSON in Nest's error shape, instead of Express's HTML page:
 * an oversized body → 413, malformed JSON → 400, an unsupported encoding or charset → 415.
 */
export function bodyErrorHandler(limit: string) {
  return (
    error: unknown,
    _request: unknown,
    response: ErrorResponse,
    next: (error: unknown) => void,
  ): void => {
    const send = (statusCode: number, error: string, message: string) =>
      response.status(statusCode).json({ statusCode, error, message });
    switch ((error as BodyParserError | undefined)?.type) {
      case 'entity.too.large':
        return send(413, 'Payload Too Large', `The request body is larger than ${limit}.`);
      case 'entity.parse.failed':
        return send(400, 'Bad Request', 'The request body is not valid JSON.');
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return send(415, 'Unsupported Media Type', 'Send the body as UTF-8 JSON.');
      default:
        return next(error);
    }
  };
}
