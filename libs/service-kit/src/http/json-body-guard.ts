import { FieldError } from './validation-errors';

/** The deepest nesting of a JSON body the services accept. */
export const MAX_BODY_DEPTH = 32;

/** A UTF-16 surrogate without its pair: not Unicode text. */
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The parts of Express's request cycle the guard uses. */
interface GuardedRequest {
  readonly body?: unknown;
}
interface ErrorResponse {
  status(code: number): { json(body: unknown): void };
}

/**
 * Refuses (400) parsed JSON bodies that the rest of the edge cannot handle, before validation sees them:
 * - nested deeper than `maxDepth`: class-transformer and the validation pipe walk a body recursively, and a
 *   few thousand levels (well within the size limit) overflow the stack: a 500 instead of a 400;
 * - strings PostgreSQL cannot store as given: a NUL character (it refuses the row: a 500) or an unpaired
 *   surrogate (stored as U+FFFD in a text column, refused in a JSON one).
 * The body is walked without recursion.
 */
export function jsonBodyGuard(maxDepth = MAX_BODY_DEPTH) {
  return (request: GuardedRequest, response: ErrorResponse, next: () => void): void => {
    const send = (body: object) =>
      response.status(400).json({ statusCode: 400, error: 'Bad Request', ...body });
    const stack: Array<{ value: unknown; path: string; depth: number }> = [
      { value: request.body, path: '', depth: 0 },
    ];
    const errors: FieldError[] = [];
    while (stack.length > 0) {
      const { value, path, depth } = stack.pop()!;
      if (typeof value === 'string') {
        if (value.includes('\u0000') || UNPAIRED_SURROGATE.test(value)) {
          const field = path || '(body)';
          errors.push({
            field,
            messages: [`${field} must not contain NUL characters or unpaired surrogates`],
          });
        }
      } else if (typeof value === 'object' && value !== null) {
        if (depth >= maxDepth) {
          return send({ message: `The request body is nested more than ${maxDepth} levels deep.` });
        }
        for (const [key, child] of Object.entries(value)) {
          stack.push({ value: child, path: path ? `${path}.${key}` : key, depth: depth + 1 });
        }
      }
    }
    if (errors.length === 0) return next();
    errors.reverse();
    send({ message: `Invalid fields: ${errors.map((e) => e.field).join(', ')}`, errors });
  };
}
