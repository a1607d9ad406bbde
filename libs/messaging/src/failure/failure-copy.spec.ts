import { createHash, randomBytes } from 'node:crypto';
import { FailureCategory } from '../errors/failure-category';
import { MessageHeaders } from '../envelope/message-headers';
import { WireMessage } from '../envelope/wire-message';
import {
  deadLetterCopy,
  DeadLetterCopyPolicy,
  failureHeaders,
  FailureFacts,
  retryCopy,
} from './failure-copy';
import { keyPseudonym, unsealKey } from './key-pseudonym';
import { parseKeySecret } from './key-secret';

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
    const keySecret = parseKeySecret(randomBytes(32).toString('base64'), 'test');
    const policy: DeadLetterCopyPolicy = { keySecret, carryHeaders: ['X-Tenant'] };
    const copyOf = (message: WireMessage, extra = policy, fresh = failure) =>
      deadLetterCopy(message, 'dlq', fresh, extra);
    /** The copy's headers without the sealed key, which is random per copy. */
    const headersOf = (copy: WireMessage) => {
      const { 'msg.sealed-key': _sealed, ...rest } = copy.headers;
      return rest;
    };

    it('keeps the body and the envelope headers, adds the failure headers and targets the DLQ', () => {
      const original = source();
      const copy = deadLetterCopy(original, 'post-create.subscribers.dlq', failure, policy);
      expect(copy.destination).toBe('post-create.subscribers.dlq');
      expect(copy.body).toBe(original.body);
      expect(headersOf(copy)).toEqual({ ...ENVELOPE_HEADERS, ...failure });
    });

    it('keeps msg.id and msg.type', () => {
      const copy = copyOf(source());
      expect(copy.headers['msg.id']).toBe(ENVELOPE_HEADERS['msg.id']);
      expect(copy.headers['msg.type']).toBe('PostCreated');
    });

    // claim: C-52
    it('carries only allowlisted headers: names no denylist foresees are dropped too', () => {
      const unforeseen = {
        'x-auth': 'Bearer 1',
        'x-csrf': 'c-1',
        passphrase: 'p',
        dsn: 'postgres://u:p@h/db',
      };
      const copy = copyOf(source({ ...ENVELOPE_HEADERS, ...SECRET_HEADERS, ...unforeseen }));
      for (const name of [...Object.keys(SECRET_HEADERS), ...Object.keys(unforeseen)]) {
        expect(copy.headers).not.toHaveProperty([name]);
      }
      expect(headersOf(copy)).toEqual({ ...ENVELOPE_HEADERS, ...failure });
    });

    it('carries a user header only when the policy names it', () => {
      const without = copyOf(source(), { keySecret, carryHeaders: [] });
      expect(without.headers).not.toHaveProperty(['x-tenant']);
      expect(copyOf(source()).headers['x-tenant']).toBe('acme');
    });

    it('replaces stale failure headers and drops msg.retry-due-at', () => {
      const fresh = failureHeaders({ ...FACTS, attempt: 3 }, STALE_FAILURE_HEADERS);
      const copy = copyOf(source({ ...ENVELOPE_HEADERS, ...STALE_FAILURE_HEADERS }), policy, fresh);
      expect(headersOf(copy)).toEqual({ ...ENVELOPE_HEADERS, ...fresh });
      expect(copy.headers).not.toHaveProperty(['msg.retry-due-at']);
      expect(copy.headers['msg.retry-attempt']).toBe('3');
      expect(copy.headers['msg.first-failure-at']).toBe(FIRST_FAILURE.toISOString());
    });

    it('drops stale failure headers even when the new failure headers are empty', () => {
      const copy = copyOf(source({ ...ENVELOPE_HEADERS, ...STALE_FAILURE_HEADERS }), policy, {});
      expect(headersOf(copy)).toEqual(ENVELOPE_HEADERS);
    });

    it('replaces the key by its keyed pseudonym, which enumerating SHA-256 of candidates does not find', () => {
      const copy = copyOf(source(ENVELOPE_HEADERS, '4711'));
      expect(copy.key).toBe(keyPseudonym('4711', keySecret));
      const candidates = Array.from({ length: 10_000 }, (_, i) => String(i));
      const hashes = new Set(candidates.map((c) => `sha256:${sha256Hex(c).slice(0, 32)}`));
      expect(hashes.has(copy.key as string)).toBe(false);
    });

    it('seals the real key so that only the key secret opens it', () => {
      const copy = copyOf(source(ENVELOPE_HEADERS, 'author-42'));
      const sealed = copy.headers['msg.sealed-key'];
      expect(unsealKey(sealed, copy.key as string, keySecret)).toBe('author-42');
      const other = parseKeySecret(randomBytes(32).toString('base64'), 'other');
      expect(unsealKey(sealed, copy.key as string, other)).toBeUndefined();
    });

    it('drops the msg.key header, which would carry the real key (RabbitMQ)', () => {
      const headers = { ...ENVELOPE_HEADERS, 'msg.key': 'author-42' };
      const copy = copyOf(source(headers, 'author-42'));
      expect(copy.headers).not.toHaveProperty(['msg.key']);
      expect(JSON.stringify(copy)).not.toContain('author-42');
    });

    it('keeps a null key null, without a sealed key', () => {
      const copy = copyOf(source(ENVELOPE_HEADERS, null));
      expect(copy.key).toBeNull();
      expect(copy.headers).not.toHaveProperty(['msg.sealed-key']);
    });

    it('does not change the source message', () => {
      const headers = { ...ENVELOPE_HEADERS, ...SECRET_HEADERS, ...STALE_FAILURE_HEADERS };
      const original = source({ ...headers });
      copyOf(original);
      expect(original.headers).toEqual(headers);
      expect(original.key).toBe('42');
    });

    it('carries no header beyond the allowlisted ones, the six failure headers and the sealed key', () => {
      const copy = copyOf(source({ ...ENVELOPE_HEADERS, ...SECRET_HEADERS, ...STALE_FAILURE_HEADERS }));
      expect(Object.keys(copy.headers).sort()).toEqual(
        [...Object.keys(ENVELOPE_HEADERS), ...SIX_FAILURE_HEADERS, 'msg.sealed-key'].sort(),
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
});
