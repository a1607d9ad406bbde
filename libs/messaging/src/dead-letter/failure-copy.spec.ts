import { createHash } from 'node:crypto';
import { FailureCategory } from '../envelope/failure-category';
import { MessageHeaders } from '../envelope/message-headers';
import { WireMessage } from '../envelope/wire-message';
import { deadLetterCopy, failureHeaders, FailureFacts, pseudonymousKey, retryCopy } from './failure-copy';

const FIRST_FAILURE = new Date('2025-01-01T00:00:00.000Z');
const NOW = new Date('2025-01-01T00:05:00.000Z');
const DUE_AT = new Date('2025-01-01T00:05:30.000Z');

const FACTS: FailureFacts = {
  category: FailureCategory.TRANSIENT,
  code: 'ECONNRESET',
  originDestination: 'post-create',
  attempt: 2,
  now: NOW,
};

const SIX_FAILURE_HEADERS = [
  'msg.failure-category',
  'msg.failure-code',
  'msg.origin-destination',
  'msg.retry-attempt',
  'msg.first-failure-at',
  'msg.last-failure-at',
];

const ENVELOPE_HEADERS = {
  'msg.id': '0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b',
  'msg.type': 'PostCreated',
  'msg.occurred-at': '2024-12-31T23:59:00.000Z',
  'msg.envelope-version': '1',
  'content-type': 'application/json',
  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  'x-tenant': 'acme',
};

const SECRET_HEADERS = {
  authorization: 'Bearer abc',
  Authorization: 'Basic xyz',
  'proxy-authorization': 'Basic xyz',
  cookie: 'sid=1',
  'set-cookie': 'sid=1',
  'x-api-key': 'k-1',
  'x-api_key': 'k-2',
  apikey: 'k-3',
  'x-auth-token': 't-1',
  'X-Refresh-Token': 't-2',
  access_token: 't-3',
  'x-client-secret': 's-1',
  secretName: 's-2',
  password: 'p-1',
  'x-db-password': 'p-2',
  passwd: 'p-3',
};

/** Headers a message carries after an earlier failure went through a retry destination. */
const STALE_FAILURE_HEADERS = {
  'msg.failure-category': 'UNKNOWN',
  'msg.failure-code': 'OLD',
  'msg.origin-destination': 'old-origin',
  'msg.retry-attempt': '1',
  'msg.first-failure-at': FIRST_FAILURE.toISOString(),
  'msg.last-failure-at': FIRST_FAILURE.toISOString(),
  'msg.retry-due-at': '2025-01-01T00:00:10.000Z',
};

function source(headers: Record<string, string> = ENVELOPE_HEADERS, key: string | null = '42'): WireMessage {
  return { destination: 'post-create', key, headers, body: Buffer.from('{"postId":1}', 'utf8') };
}

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

describe('failure-copy', () => {
  describe(failureHeaders.name, () => {
    it('returns exactly the six failure headers', () => {
      expect(failureHeaders(FACTS, {})).toEqual({
        'msg.failure-category': 'TRANSIENT',
        'msg.failure-code': 'ECONNRESET',
        'msg.origin-destination': 'post-create',
        'msg.retry-attempt': '2',
        'msg.first-failure-at': NOW.toISOString(),
        'msg.last-failure-at': NOW.toISOString(),
      });
    });

    it('keeps the first failure time from the incoming headers across retries', () => {
      const headers = failureHeaders(FACTS, {
        ...ENVELOPE_HEADERS,
        [MessageHeaders.FIRST_FAILURE_AT]: FIRST_FAILURE.toISOString(),
        [MessageHeaders.LAST_FAILURE_AT]: '2025-01-01T00:01:00.000Z',
      });
      expect(headers['msg.first-failure-at']).toBe(FIRST_FAILURE.toISOString());
      expect(headers['msg.last-failure-at']).toBe(NOW.toISOString());
    });

    it('copies nothing else from the incoming headers', () => {
      const headers = failureHeaders(FACTS, { ...ENVELOPE_HEADERS, ...SECRET_HEADERS });
      expect(Object.keys(headers).sort()).toEqual([...SIX_FAILURE_HEADERS].sort());
    });

    it('has no field for an exception message: only category and code describe the failure', () => {
      const facts = { ...FACTS, message: 'password=hunter2 rejected' } as FailureFacts;
      const headers = failureHeaders(facts, {});
      expect(Object.keys(headers).sort()).toEqual([...SIX_FAILURE_HEADERS].sort());
      expect(Object.values(headers).join('\n')).not.toContain('hunter2');
    });
  });

  describe(deadLetterCopy.name, () => {
    const failure = failureHeaders(FACTS, STALE_FAILURE_HEADERS);

    it('keeps the body and the envelope headers, adds the failure headers and targets the DLQ', () => {
      const original = source();
      const copy = deadLetterCopy(original, 'post-create.subscribers.dlq', failure);
      expect(copy.destination).toBe('post-create.subscribers.dlq');
      expect(copy.body).toBe(original.body);
      expect(copy.headers).toEqual({ ...ENVELOPE_HEADERS, ...failure });
    });

    it('keeps msg.id and msg.type', () => {
      const copy = deadLetterCopy(source(), 'dlq', failure);
      expect(copy.headers['msg.id']).toBe(ENVELOPE_HEADERS['msg.id']);
      expect(copy.headers['msg.type']).toBe('PostCreated');
    });

    it('strips headers that may hold secrets', () => {
      const copy = deadLetterCopy(source({ ...ENVELOPE_HEADERS, ...SECRET_HEADERS }), 'dlq', failure);
      for (const name of Object.keys(SECRET_HEADERS)) expect(copy.headers).not.toHaveProperty([name]);
      expect(copy.headers).toEqual({ ...ENVELOPE_HEADERS, ...failure });
    });

    it('replaces stale failure headers and drops msg.retry-due-at', () => {
      const fresh = failureHeaders({ ...FACTS, attempt: 3 }, STALE_FAILURE_HEADERS);
      const copy = deadLetterCopy(source({ ...ENVELOPE_HEADERS, ...STALE_FAILURE_HEADERS }), 'dlq', fresh);
      expect(copy.headers).toEqual({ ...ENVELOPE_HEADERS, ...fresh });
      expect(copy.headers).not.toHaveProperty(['msg.retry-due-at']);
      expect(copy.headers['msg.retry-attempt']).toBe('3');
      expect(copy.headers['msg.first-failure-at']).toBe(FIRST_FAILURE.toISOString());
    });

    it('drops stale failure headers even when the new failure headers are empty', () => {
      const copy = deadLetterCopy(source({ ...ENVELOPE_HEADERS, ...STALE_FAILURE_HEADERS }), 'dlq', {});
      expect(copy.headers).toEqual(ENVELOPE_HEADERS);
    });

    it('replaces the key with sha256:<first 32 hex digits of its SHA-256>', () => {
      const copy = deadLetterCopy(source(ENVELOPE_HEADERS, 'author-42'), 'dlq', failure);
      expect(copy.key).toMatch(/^sha256:[0-9a-f]{32}$/);
      expect(copy.key).toBe(`sha256:${sha256Hex('author-42').slice(0, 32)}`);
    });

    it('drops the msg.key header, which would carry the real key (RabbitMQ)', () => {
      const headers = { ...ENVELOPE_HEADERS, 'msg.key': 'author-42' };
      const copy = deadLetterCopy(source(headers, 'author-42'), 'dlq', failure);
      expect(copy.headers).not.toHaveProperty(['msg.key']);
      expect(JSON.stringify(copy)).not.toContain('author-42');
    });

    it('keeps a null key null', () => {
      expect(deadLetterCopy(source(ENVELOPE_HEADERS, null), 'dlq', failure).key).toBeNull();
    });

    it('does not change the source message', () => {
      const headers = { ...ENVELOPE_HEADERS, ...SECRET_HEADERS, ...STALE_FAILURE_HEADERS };
      const original = source({ ...headers });
      deadLetterCopy(original, 'dlq', failure);
      expect(original.headers).toEqual(headers);
      expect(original.key).toBe('42');
    });

    it('carries no header beyond the envelope headers and the six failure headers', () => {
      const copy = deadLetterCopy(
        source({ ...ENVELOPE_HEADERS, ...SECRET_HEADERS, ...STALE_FAILURE_HEADERS }),
        'dlq',
        failure,
      );
      expect(Object.keys(copy.headers).sort()).toEqual(
        [...Object.keys(ENVELOPE_HEADERS), ...SIX_FAILURE_HEADERS].sort(),
      );
    });
  });

  describe(retryCopy.name, () => {
    const failure = failureHeaders(FACTS, {});

    it('keeps the real key, the body and every header, adding the failure headers and the due time', () => {
      const headers = { ...ENVELOPE_HEADERS, 'msg.key': '42', authorization: 'Bearer abc' };
      const original = source(headers, '42');
      const copy = retryCopy(original, 'post-create.subscribers.retry.1000ms', failure, DUE_AT);
      expect(copy).toEqual({
        destination: 'post-create.subscribers.retry.1000ms',
        key: '42',
        headers: { ...headers, ...failure, 'msg.retry-due-at': DUE_AT.toISOString() },
        body: original.body,
      });
      expect(copy.body).toBe(original.body);
    });

    it('keeps a null key null', () => {
      expect(retryCopy(source(ENVELOPE_HEADERS, null), 'retry', failure, DUE_AT).key).toBeNull();
    });

    it('replaces the failure headers and the due time of an earlier retry', () => {
      const fresh = failureHeaders({ ...FACTS, attempt: 3 }, STALE_FAILURE_HEADERS);
      const copy = retryCopy(
        source({ ...ENVELOPE_HEADERS, ...STALE_FAILURE_HEADERS }),
        'retry',
        fresh,
        DUE_AT,
      );
      expect(copy.headers).toEqual({
        ...ENVELOPE_HEADERS,
        ...fresh,
        'msg.retry-due-at': DUE_AT.toISOString(),
      });
    });

    it('carries the six failure headers and msg.retry-due-at, nothing else about the failure', () => {
      const copy = retryCopy(source(), 'retry', failure, DUE_AT);
      const added = Object.keys(copy.headers).filter((name) => !(name in ENVELOPE_HEADERS));
      expect(added.sort()).toEqual([...SIX_FAILURE_HEADERS, 'msg.retry-due-at'].sort());
    });
  });

  describe(pseudonymousKey.name, () => {
    it('is sha256: and 32 lower-case hex digits', () => {
      expect(pseudonymousKey('42')).toMatch(/^sha256:[0-9a-f]{32}$/);
      expect(pseudonymousKey('')).toBe(`sha256:${sha256Hex('').slice(0, 32)}`);
    });

    it('is stable for the same key', () => {
      expect(pseudonymousKey('author-42')).toBe(pseudonymousKey('author-42'));
    });

    it('differs for different keys', () => {
      const keys = ['42', '43', 'author-42', 'Author-42', ' 42', '', 'ü'];
      expect(new Set(keys.map(pseudonymousKey)).size).toBe(keys.length);
    });

    it('does not contain the key', () => {
      expect(pseudonymousKey('author-42')).not.toContain('author-42');
    });
  });
});
