import { DuplicateMessageIdError } from '../errors/duplicate-message-id.error';
import { FailureCategory } from '../errors/failure-category';
import { MessageHandlingError } from '../errors/message-handling.error';
import { TransactionAbortedError } from '../errors/transaction-aborted.error';
import { ErrorClassifier } from './error-classifier';

const { TRANSIENT, VALIDATION, AUTHENTICATION, AUTHORIZATION, CONFIGURATION, UNKNOWN } = FailureCategory;

class PaymentDeclinedError extends Error {}
class CodedError extends Error {
  constructor(readonly code: string | number) {
    super('coded');
  }
}
/** Like TypeORM's QueryFailedError when the driver error's properties were not copied onto it. */
class QueryFailedLikeError extends Error {
  constructor(readonly driverError: { code: string }) {
    super('query failed');
  }
}

describe(ErrorClassifier.name, () => {
  describe('classify', () => {
    const classifier = new ErrorClassifier();

    it('lets a user class rule beat the built-ins', () => {
      const withRule = new ErrorClassifier([
        { errorClass: PaymentDeclinedError, category: VALIDATION, code: 'PAY' },
      ]);
      const error = Object.assign(new PaymentDeclinedError(), { retriable: true, code: 'ECONNRESET' });
      expect(withRule.classify(error)).toEqual({ category: VALIDATION, code: 'PAY' });
      expect(classifier.classify(error)).toEqual({
        category: TRANSIENT,
        code: 'PaymentDeclinedError/ECONNRESET',
      });
    });

    it("takes a class rule's code from the error's class and code, as the built-ins do", () => {
      const rules = [{ errorClass: CodedError, category: AUTHORIZATION }];
      expect(new ErrorClassifier(rules).classify(new CodedError('E42'))).toEqual({
        category: AUTHORIZATION,
        code: 'CodedError/E42',
      });
      const noCode = new ErrorClassifier([{ errorClass: PaymentDeclinedError, category: VALIDATION }]);
      expect(noCode.classify(new PaymentDeclinedError())).toEqual({
        category: VALIDATION,
        code: 'PaymentDeclinedError',
      });
    });

    it('matches a code rule as strings, in order, before the built-ins', () => {
      const rules = [
        { code: 429, category: TRANSIENT },
        { code: '23505', category: UNKNOWN },
        { code: '23505', category: TRANSIENT },
      ];
      const withRules = new ErrorClassifier(rules);
      expect(withRules.classify(new CodedError('429'))).toEqual({
        category: TRANSIENT,
        code: 'CodedError/429',
      });
      expect(withRules.classify(new CodedError('23505'))).toEqual({
        category: UNKNOWN,
        code: 'CodedError/23505',
      });
    });

    it('classifies a TransactionAbortedError as the database error it names, and says so in the code', () => {
      const unique = new TransactionAbortedError(new QueryFailedLikeError({ code: '23505' }));
      expect(classifier.classify(unique)).toEqual({
        category: VALIDATION,
        code: 'TransactionAbortedError/23505',
      });
      const deadlock = new TransactionAbortedError(new QueryFailedLikeError({ code: 'ER_LOCK_DEADLOCK' }));
      expect(classifier.classify(deadlock)).toEqual({
        category: TRANSIENT,
        code: 'TransactionAbortedError/ER_LOCK_DEADLOCK',
      });
      expect(classifier.classify(new TransactionAbortedError(undefined))).toEqual({
        category: UNKNOWN,
        code: 'TransactionAbortedError',
      });
      // User rules apply to it (by class) and to the error it names (by code).
      const rules = [{ code: '23505', category: TRANSIENT }];
      expect(new ErrorClassifier(rules).classify(unique).category).toBe(TRANSIENT);
      const byClass = new ErrorClassifier([{ errorClass: TransactionAbortedError, category: CONFIGURATION }]);
      expect(byClass.classify(unique)).toEqual({ category: CONFIGURATION, code: 'TransactionAbortedError' });
    });

    it('takes the category and code of a MessageHandlingError', () => {
      const error = new MessageHandlingError(AUTHENTICATION, 'TOKEN_EXPIRED', 'the token expired');
      expect(classifier.classify(error)).toEqual({ category: AUTHENTICATION, code: 'TOKEN_EXPIRED' });
    });

    it('treats retriable: true (kafkajs) as TRANSIENT and does not classify on retriable: false', () => {
      const retriable = Object.assign(new Error('x'), { name: 'KafkaJSConnectionError', retriable: true });
      expect(classifier.classify(retriable)).toEqual({ category: TRANSIENT, code: 'KafkaJSConnectionError' });
      const notRetriable = Object.assign(new Error('x'), { retriable: false });
      expect(classifier.classify(notRetriable)).toEqual({ category: UNKNOWN, code: 'Error' });
    });

    // It stood for the outbox's unique violation (23505, ER_DUP_ENTRY): classified as that was.
    it('classifies a DuplicateMessageIdError as VALIDATION, as the unique violation it replaces', () => {
      const error = new DuplicateMessageIdError('0193b6a0-0000-7000-8000-000000000001', 'OrderPlaced');
      expect(classifier.classify(error)).toEqual({ category: VALIDATION, code: 'DuplicateMessageIdError' });
    });

    it.each([
      ['40001', TRANSIENT],
      ['40P01', TRANSIENT],
      ['55P03', TRANSIENT],
      ['57P01', TRANSIENT],
      ['57014', TRANSIENT],
      ['53300', TRANSIENT],
      ['08000', TRANSIENT],
      ['08003', TRANSIENT],
      ['08006', TRANSIENT],
      ['28000', AUTHENTICATION],
      ['28P01', AUTHENTICATION],
      ['42501', AUTHORIZATION],
      ['23505', VALIDATION],
      ['23503', VALIDATION],
      ['23502', VALIDATION],
      ['23514', VALIDATION],
      ['22P02', VALIDATION],
    ])('classifies PostgreSQL %s as %s via code and via driverError.code', (code, category) => {
      expect(classifier.classify(new CodedError(code))).toEqual({ category, code: `CodedError/${code}` });
      expect(classifier.classify(new QueryFailedLikeError({ code }))).toEqual({
        category,
        code: `QueryFailedLikeError/${code}`,
      });
    });

    it.each([
      ['ER_LOCK_DEADLOCK', TRANSIENT],
      ['ER_LOCK_WAIT_TIMEOUT', TRANSIENT],
      ['ER_QUERY_INTERRUPTED', TRANSIENT],
      ['ER_CON_COUNT_ERROR', TRANSIENT],
      ['ER_SERVER_SHUTDOWN', TRANSIENT],
      ['ER_CONNECTION_KILLED', TRANSIENT],
      ['PROTOCOL_CONNECTION_LOST', TRANSIENT],
      ['ER_ACCESS_DENIED_ERROR', AUTHENTICATION],
      ['ER_DBACCESS_DENIED_ERROR', AUTHORIZATION],
      ['ER_TABLEACCESS_DENIED_ERROR', AUTHORIZATION],
      ['ER_COLUMNACCESS_DENIED_ERROR', AUTHORIZATION],
      ['ER_SPECIFIC_ACCESS_DENIED_ERROR', AUTHORIZATION],
      ['ER_DUP_ENTRY', VALIDATION],
      ['ER_NO_REFERENCED_ROW_2', VALIDATION],
      ['ER_ROW_IS_REFERENCED_2', VALIDATION],
      ['ER_BAD_NULL_ERROR', VALIDATION],
      ['ER_DATA_TOO_LONG', VALIDATION],
      ['ER_CHECK_CONSTRAINT_VIOLATED', VALIDATION],
      ['ER_CONSTRAINT_FAILED', VALIDATION],
      ['ER_TRUNCATED_WRONG_VALUE_FOR_FIELD', VALIDATION],
    ])('classifies MySQL/MariaDB %s as %s via code and via driverError.code', (code, category) => {
      expect(classifier.classify(new CodedError(code))).toEqual({ category, code: `CodedError/${code}` });
      expect(classifier.classify(new QueryFailedLikeError({ code }))).toEqual({
        category,
        code: `QueryFailedLikeError/${code}`,
      });
    });

    it.each([
      ['ECONNREFUSED', TRANSIENT],
      ['ECONNRESET', TRANSIENT],
      ['ETIMEDOUT', TRANSIENT],
      ['EPIPE', TRANSIENT],
      ['EAI_AGAIN', TRANSIENT],
      ['ECONNABORTED', TRANSIENT],
      ['ENOTFOUND', CONFIGURATION],
    ])('classifies the network code %s as %s', (code, category) => {
      expect(classifier.classify(new CodedError(code))).toEqual({ category, code: `CodedError/${code}` });
    });

    it.each<[string, unknown, string]>([
      ['an unknown error', new Error('boom'), 'Error'],
      ['an error of its own class', new PaymentDeclinedError('declined'), 'PaymentDeclinedError'],
      ['an unknown code', new CodedError('ERR_SOMETHING'), 'CodedError/ERR_SOMETHING'],
      [
        'an error named by its name',
        Object.assign(new Error('x'), { name: 'QueryFailedError' }),
        'QueryFailedError',
      ],
      ['a thrown string', 'ECONNRESET', 'UNCLASSIFIED'],
      ['undefined', undefined, 'UNCLASSIFIED'],
      ['a plain object', { category: 'NOT_A_CATEGORY' }, 'UNCLASSIFIED'],
    ])('classifies %s as UNKNOWN, code %s', (_name, error, code) => {
      expect(classifier.classify(error)).toEqual({ category: UNKNOWN, code });
    });

    it.each<[string, unknown, string]>([
      [
        'an HTTP client error (response.status)',
        Object.assign(new Error('x'), {
          name: 'AxiosError',
          code: 'ERR_BAD_RESPONSE',
          response: { status: 503 },
        }),
        'AxiosError/503',
      ],
      [
        "Nest's HttpException (status)",
        Object.assign(new PaymentDeclinedError('x'), { status: 402 }),
        'PaymentDeclinedError/402',
      ],
      ['a statusCode', Object.assign(new CodedError('E1'), { statusCode: 429 }), 'CodedError/429'],
      [
        'a status that is not HTTP',
        Object.assign(new CodedError('E1'), { status: 'failed' }),
        'CodedError/E1',
      ],
    ])('names %s by its HTTP status', (_name, error, code) => {
      expect(classifier.classify(error).code).toBe(code);
    });

    // claim: C-47
    it('never reads the message: "timeout" in the text is not TRANSIENT', () => {
      const error = new Error('Connection timeout: ETIMEDOUT after 30s (ECONNRESET)');
      expect(classifier.classify(error)).toEqual({ category: UNKNOWN, code: 'Error' });
    });

    // claim: C-47
    it('sanitises the code to [A-Za-z0-9_./-], at most 64 characters', () => {
      const error = new MessageHandlingError(VALIDATION, 'bad code: <x>/ü\n' + 'A'.repeat(100));
      const { code } = classifier.classify(error);
      expect(code).toMatch(/^[A-Za-z0-9_./-]{1,64}$/);
      expect(code).toBe(('badcodex/' + 'A'.repeat(100)).slice(0, 64));
    });

    it('falls back to the category name when nothing of the code survives', () => {
      expect(classifier.classify(new MessageHandlingError(VALIDATION, '!!!'))).toEqual({
        category: VALIDATION,
        code: 'VALIDATION',
      });
    });
  });
});
