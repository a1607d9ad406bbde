import { FailureCategory } from '../errors/failure-category';
import { DuplicateMessageIdError } from '../errors/duplicate-message-id.error';
import { TransactionAbortedError } from '../errors/transaction-aborted.error';
import { httpStatus, property } from './error-shape';

/** What the classifier says about an error: a category to decide on and a token for `msg.failure-code`. */
export interface Classification {
  /** The category the retry decision is taken on. */
  readonly category: FailureCategory;
  /**
   * Short and machine-readable, `[A-Za-z0-9_./-]{1,64}`; never the error message. By default the error's class
   * and its machine code where it has one: `QueryFailedError/23505`, `AxiosError/503`, `Error/ECONNRESET`,
   * `PaymentDeclinedError` (no code); a rule's or a `MessageHandlingError`'s code as given.
   */
  readonly code: string;
}

/**
 * A user rule, tried before the built-ins, in order. Either by type (`instanceof errorClass`; `code`
 * defaults to the error's class and own code, as the built-ins make it) or by the error's `code` property
 * (compared as strings; a TypeORM `driverError.code` counts too).
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
 * first, then: a `TransactionAbortedError` as the database error it names (its code
 * `TransactionAbortedError/<that error's own code>`, e.g. `TransactionAbortedError/23505`), a
 * `DuplicateMessageIdError` as VALIDATION (the unique violation it names), an error carrying
 * its own `category` (`MessageHandlingError`), `retriable: true` (kafkajs) → TRANSIENT, Node network codes,
 * PostgreSQL SQLSTATEs, MySQL/MariaDB error codes; anything else → UNKNOWN. The failure code names the
 * error's class and its machine code (see `Classification.code`), so that a dead letter says why without
 * carrying the error's text.
 */
export class ErrorClassifier {
  /** @param rules tried in order before the built-ins; default none. */
  constructor(private readonly rules: readonly ClassificationRule[] = []) {}

  /** Classifies a thrown value (an Error or anything else that was thrown). */
  classify(error: unknown): Classification {
    const own = ownCode(error);
    const described = describedCode(error, own);
    for (const rule of this.rules) {
      if ('errorClass' in rule) {
        if (error instanceof rule.errorClass) return result(rule.category, rule.code ?? described);
      } else if (own !== undefined && own === String(rule.code)) {
        return result(rule.category, described);
      }
    }
    if (error instanceof TransactionAbortedError) return this.aborted(error);
    // The outbox's unique index's refusal, named: VALIDATION as the database error it stands for.
    if (error instanceof DuplicateMessageIdError) return result(FailureCategory.VALIDATION, described);
    const category = property(error, 'category');
    // The application classified it itself (MessageHandlingError): its code as it chose it.
    if (CATEGORIES.includes(category)) return result(category as FailureCategory, own);
    if (property(error, 'retriable') === true) return result(FailureCategory.TRANSIENT, described);
    const byCode = own === undefined ? undefined : CATEGORY_OF_CODE.get(own);
    return result(byCode ?? FailureCategory.UNKNOWN, described);
  }

  /**
   * A swallowed database error that ended the transaction: decided on as that error (user rules included),
   * and named so: `TransactionAbortedError/23505`; `TransactionAbortedError` (UNKNOWN) when nobody saw it.
   */
  private aborted(error: TransactionAbortedError): Classification {
    const kind = className(error);
    if (error.databaseError === undefined) return result(FailureCategory.UNKNOWN, kind);
    const { category } = this.classify(error.databaseError);
    const code = ownCode(error.databaseError);
    return result(category, code === undefined ? kind : `${kind}/${code}`);
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

/**
 * The default failure code: the error's class, then its HTTP status (`status`, `statusCode`, an HTTP client's
 * `response.status`) or its own code: `QueryFailedError/23505`. `UNCLASSIFIED` for a thrown value that is not
 * an object.
 */
function describedCode(error: unknown, own: string | undefined): string {
  if (typeof error !== 'object' || error === null) return 'UNCLASSIFIED';
  const machine = httpStatus(error)?.toString() ?? own;
  const kind = className(error);
  return machine === undefined ? kind : `${kind}/${machine}`;
}

/**
 * What kind of error it is: its `name` when it says more than `Error` (kafkajs and TypeORM set it), else its
 * class's name (a subclass that did not set `name` still says what it is), else `Error`; `UNCLASSIFIED` for a
 * thrown object that is no error.
 */
function className(error: object): string {
  const candidates = [
    property(error, 'name'),
    (error as { constructor?: { name?: unknown } }).constructor?.name,
  ];
  const named = candidates.find(
    (n): n is string => typeof n === 'string' && n !== '' && n !== 'Error' && n !== 'Object',
  );
  return named ?? (error instanceof Error ? 'Error' : 'UNCLASSIFIED');
}

function result(category: FailureCategory, code: string | undefined): Classification {
  const token = (code ?? '').replace(/[^A-Za-z0-9_./-]/g, '').slice(0, 64);
  return { category, code: token === '' ? category : token };
}
