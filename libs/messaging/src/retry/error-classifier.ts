import { FailureCategory } from '../envelope/failure-category';

/** What the classifier says about an error: a category to decide on and a token for `msg.failure-code`. */
export interface Classification {
  /** The category the retry decision is taken on. */
  readonly category: FailureCategory;
  /** Short and machine-readable, `[A-Za-z0-9_.-]{1,64}`; never the error message. */
  readonly code: string;
}

/**
 * A user rule, tried before the built-ins, in order. Either by type (`instanceof errorClass`; `code`
 * defaults to the error's own code, else the category name) or by the error's `code` property (compared as
 * strings; a TypeORM `driverError.code` counts too).
 */
export type ClassificationRule =
  | {
      readonly errorClass: abstract new (...args: never[]) => Error;
      readonly category: FailureCategory;
      readonly code?: string;
    }
  | { readonly code: string | number; readonly category: FailureCategory };

const CATEGORY_OF_CODE: ReadonlyMap<string, FailureCategory> = new Map([
  // Node network errors: the peer may come back; a name that does not resolve is configuration.
  ...codes(FailureCategory.TRANSIENT, 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN'),
  ...codes(FailureCategory.TRANSIENT, 'ECONNABORTED'),
  ...codes(FailureCategory.CONFIGURATION, 'ENOTFOUND'),
  // PostgreSQL SQLSTATE: serialization, deadlock, lock, shutdown, cancel, too many connections, connection.
  ...codes(FailureCategory.TRANSIENT, '40001', '40P01', '55P03', '57P01', '57014', '53300'),
  ...codes(FailureCategory.TRANSIENT, '08000', '08003', '08006'),
  ...codes(FailureCategory.AUTHENTICATION, '28000', '28P01'),
  ...codes(FailureCategory.AUTHORIZATION, '42501'),
  // Unique, foreign key, not null, check, invalid text representation: the data, not the moment.
  ...codes(FailureCategory.VALIDATION, '23505', '23503', '23502', '23514', '22P02'),
  // MySQL and MariaDB (the driver's codes): the same kinds of failure.
  ...codes(FailureCategory.TRANSIENT, 'ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT', 'ER_QUERY_INTERRUPTED'),
  ...codes(FailureCategory.TRANSIENT, 'ER_CON_COUNT_ERROR', 'ER_SERVER_SHUTDOWN', 'ER_CONNECTION_KILLED'),
  ...codes(FailureCategory.TRANSIENT, 'PROTOCOL_CONNECTION_LOST'),
  ...codes(FailureCategory.AUTHENTICATION, 'ER_ACCESS_DENIED_ERROR'),
  ...codes(FailureCategory.AUTHORIZATION, 'ER_DBACCESS_DENIED_ERROR', 'ER_TABLEACCESS_DENIED_ERROR'),
  ...codes(FailureCategory.AUTHORIZATION, 'ER_COLUMNACCESS_DENIED_ERROR', 'ER_SPECIFIC_ACCESS_DENIED_ERROR'),
  ...codes(FailureCategory.VALIDATION, 'ER_DUP_ENTRY', 'ER_NO_REFERENCED_ROW_2', 'ER_ROW_IS_REFERENCED_2'),
  ...codes(
    FailureCategory.VALIDATION,
    'ER_BAD_NULL_ERROR',
    'ER_DATA_TOO_LONG',
    'ER_CHECK_CONSTRAINT_VIOLATED',
  ),
  ...codes(FailureCategory.VALIDATION, 'ER_CONSTRAINT_FAILED', 'ER_TRUNCATED_WRONG_VALUE_FOR_FIELD'),
]);

const CATEGORIES: readonly unknown[] = Object.values(FailureCategory);

/**
 * Maps a thrown value to a `FailureCategory`, by type and by code, never by message text. User rules
 * first, then: an error carrying its own `category` (`MessageHandlingError`), `retriable: true` (kafkajs)
 * → TRANSIENT, Node network codes, PostgreSQL SQLSTATEs, MySQL/MariaDB error codes; anything else →
 * UNKNOWN / `UNCLASSIFIED`.
 */
export class ErrorClassifier {
  /** @param rules tried in order before the built-ins; default none. */
  constructor(private readonly rules: readonly ClassificationRule[] = []) {}

  /** Classifies a thrown value (an Error or anything else that was thrown). */
  classify(error: unknown): Classification {
    const own = ownCode(error);
    for (const rule of this.rules) {
      if ('errorClass' in rule) {
        if (error instanceof rule.errorClass) return result(rule.category, rule.code ?? own);
      } else if (own !== undefined && own === String(rule.code)) {
        return result(rule.category, own);
      }
    }
    const category = property(error, 'category');
    if (CATEGORIES.includes(category)) return result(category as FailureCategory, own);
    if (property(error, 'retriable') === true) return result(FailureCategory.TRANSIENT, own);
    const byCode = own === undefined ? undefined : CATEGORY_OF_CODE.get(own);
    if (byCode !== undefined) return result(byCode, own);
    return { category: FailureCategory.UNKNOWN, code: 'UNCLASSIFIED' };
  }
}

function codes(category: FailureCategory, ...values: string[]): [string, FailureCategory][] {
  return values.map((value) => [value, category]);
}

/** The error's `code`, else its `driverError.code` (TypeORM's QueryFailedError), as a string. */
function ownCode(error: unknown): string | undefined {
  const code = property(error, 'code') ?? property(property(error, 'driverError'), 'code');
  return typeof code === 'string' || typeof code === 'number' ? String(code) : undefined;
}

function property(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

function result(category: FailureCategory, code: string | undefined): Classification {
  const token = (code ?? '').replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 64);
  return { category, code: token === '' ? category : token };
}
