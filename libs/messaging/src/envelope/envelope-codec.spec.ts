import { FakeClock } from '../common/fake-clock';
import { decodeEnvelope, DecodeFailure, DecodeResult, encodeEnvelope } from './envelope-codec';
import { FailureCategory } from '../errors/failure-category';
import { MessageEnvelope } from './message-envelope';
import { MessageHeaders } from './message-headers';
import { WireMessage } from './wire-message';

const MESSAGE_ID = '0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b';
const OCCURRED_AT = new Date('2025-03-04T05:06:07.089Z');

const ENVELOPE: Omit<MessageEnvelope, 'payload'> = {
  messageId: MESSAGE_ID,
  type: 'PostCreated',
  destination: 'post-create',
  key: '42',
  occurredAt: OCCURRED_AT,
  headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'x-tenant': 'acme' },
};

/** Headers of a valid version-1 message; a test overrides or removes (`undefined`) what it needs. */
function wire(overrides: Record<string, string | undefined> = {}, body = '{"postId":1}'): WireMessage {
  const headers: Record<string, string> = {
    [MessageHeaders.ID]: MESSAGE_ID,
    [MessageHeaders.TYPE]: 'PostCreated',
    [MessageHeaders.OCCURRED_AT]: OCCURRED_AT.toISOString(),
    [MessageHeaders.ENVELOPE_VERSION]: '1',
    [MessageHeaders.CONTENT_TYPE]: 'application/json',
  };
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  return { destination: 'post-create', key: '42', headers, body: Buffer.from(body, 'utf8') };
}

function envelopeOf(result: DecodeResult): MessageEnvelope {
  if (!result.ok) throw new Error(`expected a decoded envelope, got ${result.failure.code}`);
  return result.envelope;
}

function failureOf(result: DecodeResult): DecodeFailure {
  if (result.ok) throw new Error('expected a decode failure');
  return result.failure;
}

describe('envelope-codec', () => {
  describe(encodeEnvelope.name, () => {
    it('puts the envelope fields in headers, the key beside them and the payload JSON in the body', () => {
      const encoded = encodeEnvelope(ENVELOPE, '{"postId":1}');
      expect(encoded).toEqual({
        destination: 'post-create',
        key: '42',
        headers: {
          traceparent: ENVELOPE.headers.traceparent,
          'x-tenant': 'acme',
          'msg.id': MESSAGE_ID,
          'msg.type': 'PostCreated',
          'msg.occurred-at': '2025-03-04T05:06:07.089Z',
          'msg.envelope-version': '1',
          'content-type': 'application/json',
        },
        body: Buffer.from('{"postId":1}', 'utf8'),
      });
    });

    it('passes the payload JSON text through unchanged', () => {
      const json = '{ "title": "Zürich ✓", "n": 1.50 }';
      expect(encodeEnvelope(ENVELOPE, json).body.toString('utf8')).toBe(json);
    });

    it('drops reserved msg.* user headers instead of letting them override the envelope', () => {
      const encoded = encodeEnvelope(
        {
          ...ENVELOPE,
          headers: {
            'x-tenant': 'acme',
            'msg.id': 'forged',
            'msg.type': 'Forged',
            'msg.failure-category': 'TRANSIENT',
            'msg.custom': 'x',
          },
        },
        '{}',
      );
      expect(encoded.headers).toEqual({
        'x-tenant': 'acme',
        'msg.id': MESSAGE_ID,
        'msg.type': 'PostCreated',
        'msg.occurred-at': OCCURRED_AT.toISOString(),
        'msg.envelope-version': '1',
        'content-type': 'application/json',
      });
    });

    it('sets the JSON content type even when a user header names another', () => {
      const encoded = encodeEnvelope({ ...ENVELOPE, headers: { 'content-type': 'text/plain' } }, '{}');
      expect(encoded.headers['content-type']).toBe('application/json');
    });
  });

  describe(decodeEnvelope.name, () => {
    it.each(['application/jsonp', 'application/json-seq', 'text/plain'])(
      'refuses the content type %s',
      (type) => {
        const wire = encodeEnvelope(ENVELOPE, '{}');
        const result = decodeEnvelope({ ...wire, headers: { ...wire.headers, 'content-type': type } });
        expect(result.ok ? undefined : result.failure.code).toBe('UNSUPPORTED_CONTENT_TYPE');
      },
    );

    it.each(['1', '2026-11-30', 'yesterday'])(
      'refuses an occurred-at that is not ISO 8601 with a zone: %s',
      (text) => {
        const wire = encodeEnvelope(ENVELOPE, '{}');
        const result = decodeEnvelope({ ...wire, headers: { ...wire.headers, 'msg.occurred-at': text } });
        expect(result.ok ? undefined : result.failure.code).toBe('INVALID_OCCURRED_AT');
      },
    );

    it('round-trips messageId, type, destination, key, occurredAt, headers and payload', () => {
      const payload = { postId: 1, authorId: 42, title: 'Hello', tags: ['a', 'b'], draft: false, n: null };
      const decoded = envelopeOf(decodeEnvelope(encodeEnvelope(ENVELOPE, JSON.stringify(payload))));
      expect(decoded).toEqual({ ...ENVELOPE, eventVersion: 1, payload });
      expect(decoded.occurredAt.getTime()).toBe(OCCURRED_AT.getTime());
    });

    it('round-trips the event version: a header above 1, none for 1, and 1 when absent', () => {
      const v3 = encodeEnvelope({ ...ENVELOPE, eventVersion: 3 }, '{}');
      expect(v3.headers['msg.event-version']).toBe('3');
      expect(envelopeOf(decodeEnvelope(v3)).eventVersion).toBe(3);
      const v1 = encodeEnvelope({ ...ENVELOPE, eventVersion: 1 }, '{}');
      expect(v1.headers).not.toHaveProperty('msg.event-version');
      expect(envelopeOf(decodeEnvelope(v1)).eventVersion).toBe(1);
    });

    it("keeps the event version an outbox row's headers carry (OutboxService.add writes it there), and only a valid one", () => {
      const row = { ...ENVELOPE, headers: { 'x-tenant': 'acme', 'msg.event-version': '2' } };
      expect(encodeEnvelope(row, '{}').headers).toMatchObject({
        'x-tenant': 'acme',
        'msg.event-version': '2',
      });
      for (const bad of ['0', '-2', '2.5', ' 2', '02', 'two', '99999999']) {
        const tampered = { ...ENVELOPE, headers: { 'msg.event-version': bad } };
        expect(encodeEnvelope(tampered, '{}').headers).not.toHaveProperty('msg.event-version');
      }
    });

    it.each(['0', '-1', '1.5', '01', 'v2', '', '10000000', '1e3'])(
      'refuses an event version header %p as DESERIALIZATION/INVALID_EVENT_VERSION',
      (text) => {
        const failure = failureOf(decodeEnvelope(wire({ 'msg.event-version': text })));
        expect(failure).toEqual({
          category: FailureCategory.DESERIALIZATION,
          code: 'INVALID_EVENT_VERSION',
          messageId: MESSAGE_ID,
        });
      },
    );

    it('leaves reserved msg.* headers and content-type out of the envelope headers', () => {
      const decoded = envelopeOf(
        decodeEnvelope(wire({ 'x-tenant': 'acme', 'msg.retry-attempt': '2', 'msg.key': '42' })),
      );
      expect(decoded.headers).toEqual({ 'x-tenant': 'acme' });
    });

    it.each<[string, Record<string, string | undefined>, DecodeFailure['code']]>([
      ['no msg.id', { 'msg.id': undefined }, 'MISSING_MESSAGE_ID'],
      ['an empty msg.id', { 'msg.id': '' }, 'MISSING_MESSAGE_ID'],
      ['a msg.id that is not a UUID', { 'msg.id': 'order-17' }, 'MISSING_MESSAGE_ID'],
      ['the nil UUID as msg.id', { 'msg.id': '00000000-0000-0000-0000-000000000000' }, 'MISSING_MESSAGE_ID'],
    ])('fails with DESERIALIZATION MISSING_MESSAGE_ID and no id for %s', (_, headers, code) => {
      const failure = failureOf(decodeEnvelope(wire(headers)));
      expect(failure).toEqual({ category: FailureCategory.DESERIALIZATION, code, messageId: undefined });
    });

    it.each<[string, Record<string, string | undefined>, string, DecodeFailure['code']]>([
      ['no msg.type', { 'msg.type': undefined }, '{}', 'MISSING_TYPE'],
      ['an empty msg.type', { 'msg.type': '' }, '{}', 'MISSING_TYPE'],
      ['envelope version 2', { 'msg.envelope-version': '2' }, '{}', 'UNSUPPORTED_ENVELOPE_VERSION'],
      ['an empty envelope version', { 'msg.envelope-version': '' }, '{}', 'UNSUPPORTED_ENVELOPE_VERSION'],
      ['content type text/plain', { 'content-type': 'text/plain' }, '{}', 'UNSUPPORTED_CONTENT_TYPE'],
      [
        'content type application/xml',
        { 'content-type': 'application/xml' },
        '<a/>',
        'UNSUPPORTED_CONTENT_TYPE',
      ],
      ['a body that is not JSON', {}, '{"postId":', 'INVALID_JSON'],
      ['an empty body', {}, '', 'INVALID_JSON'],
      ['an occurred-at that is not a date', { 'msg.occurred-at': 'yesterday' }, '{}', 'INVALID_OCCURRED_AT'],
      ['an empty occurred-at', { 'msg.occurred-at': '' }, '{}', 'INVALID_OCCURRED_AT'],
    ])('fails with DESERIALIZATION and reports the valid message id for %s', (_, headers, body, code) => {
      const failure = failureOf(decodeEnvelope(wire(headers, body)));
      expect(failure).toEqual({ category: FailureCategory.DESERIALIZATION, code, messageId: MESSAGE_ID });
    });

    // claim: C-45
    it('reports the first problem in header order: id, type, version, content type, occurred-at, body', () => {
      const everythingWrong = {
        'msg.type': undefined,
        'msg.envelope-version': '9',
        'content-type': 'text/plain',
        'msg.occurred-at': 'never',
      };
      expect(failureOf(decodeEnvelope(wire(everythingWrong, 'nope'))).code).toBe('MISSING_TYPE');
      const { 'msg.type': _type, ...fromVersion } = everythingWrong;
      expect(failureOf(decodeEnvelope(wire(fromVersion, 'nope'))).code).toBe('UNSUPPORTED_ENVELOPE_VERSION');
      expect(
        failureOf(decodeEnvelope(wire({ 'content-type': 'text/plain', 'msg.occurred-at': 'never' }, 'nope')))
          .code,
      ).toBe('UNSUPPORTED_CONTENT_TYPE');
      expect(failureOf(decodeEnvelope(wire({ 'msg.occurred-at': 'never' }, 'nope'))).code).toBe(
        'INVALID_OCCURRED_AT',
      );
    });

    it('accepts a message without an envelope version (producers other than this library)', () => {
      const decoded = envelopeOf(decodeEnvelope(wire({ 'msg.envelope-version': undefined })));
      expect(decoded.payload).toEqual({ postId: 1 });
    });

    it('accepts a message without a content type', () => {
      expect(decodeEnvelope(wire({ 'content-type': undefined })).ok).toBe(true);
    });

    it("uses the clock's current time for a message without occurred-at", () => {
      const clock = new FakeClock(Date.parse('2030-01-02T03:04:05.000Z'));
      const decoded = envelopeOf(decodeEnvelope(wire({ 'msg.occurred-at': undefined }), clock));
      expect(decoded.occurredAt).toEqual(new Date('2030-01-02T03:04:05.000Z'));
    });

    it.each(['application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8'])(
      'accepts content type %p',
      (contentType) => {
        expect(envelopeOf(decodeEnvelope(wire({ 'content-type': contentType }))).payload).toEqual({
          postId: 1,
        });
      },
    );

    it('accepts a version 4 message id from another producer', () => {
      const id = '9b2e4c1a-3f5d-4a7b-9c8d-1e2f3a4b5c6d';
      expect(envelopeOf(decodeEnvelope(wire({ 'msg.id': id }))).messageId).toBe(id);
    });

    it('takes the key from the wire key first', () => {
      const message = { ...wire({ 'msg.key': 'from-header' }), key: 'from-wire' };
      expect(envelopeOf(decodeEnvelope(message)).key).toBe('from-wire');
    });

    it('falls back to the msg.key header when the wire has no key (RabbitMQ)', () => {
      const message = { ...wire({ 'msg.key': 'from-header' }), key: null };
      expect(envelopeOf(decodeEnvelope(message)).key).toBe('from-header');
    });

    it("falls back to '' when there is no key at all", () => {
      expect(envelopeOf(decodeEnvelope({ ...wire(), key: null })).key).toBe('');
    });

    it('keeps the destination of the wire message', () => {
      const message = { ...wire(), destination: 'post-create.retry' };
      expect(envelopeOf(decodeEnvelope(message)).destination).toBe('post-create.retry');
    });

    it('decodes any JSON value as payload, not only objects', () => {
      expect(envelopeOf(decodeEnvelope(wire({}, '[1,2]'))).payload).toEqual([1, 2]);
      expect(envelopeOf(decodeEnvelope(wire({}, 'null'))).payload).toBeNull();
      expect(envelopeOf(decodeEnvelope(wire({}, '"text"'))).payload).toBe('text');
    });

    it('decodes UTF-8 text in the body', () => {
      expect(envelopeOf(decodeEnvelope(wire({}, '{"title":"Zürich ✓ 🚀"}'))).payload).toEqual({
        title: 'Zürich ✓ 🚀',
      });
    });

    it('decodes a 1 MiB JSON body', () => {
      const filler = 'x'.repeat(1024 * 1024 - '{"filler":""}'.length);
      const body = JSON.stringify({ filler });
      expect(Buffer.byteLength(body)).toBe(1024 * 1024);
      const payload = envelopeOf(decodeEnvelope(wire({}, body))).payload as { filler: string };
      expect(payload.filler).toHaveLength(filler.length);
    });

    it('does not throw on a hostile message: it returns a failure', () => {
      const hostile: WireMessage = { destination: '', key: null, headers: {}, body: Buffer.alloc(0) };
      expect(() => decodeEnvelope(hostile)).not.toThrow();
      expect(decodeEnvelope(hostile).ok).toBe(false);
    });
  });
});
