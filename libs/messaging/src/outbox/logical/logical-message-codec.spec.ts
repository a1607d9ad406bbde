import { NewOutboxRow } from '../outbox-row';
import { decodeLogicalMessage, encodeLogicalMessage } from './logical-message-codec';

const ROW: NewOutboxRow = {
  messageId: '0190a6b2-7c1e-7a35-9a39-6b1c2f0e8d41',
  destination: 'post-create',
  type: 'PostCreated',
  key: 'author-7\nwith a newline',
  headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tenant: 'a' },
  payloadJson: '{"postId":1,"title":"line one\\nline two"}',
  occurredAt: new Date('2026-12-01T10:00:00.123Z'),
};

describe('logical message content', () => {
  describe(encodeLogicalMessage.name, () => {
    it('writes the envelope as one line, then the payload text as given', () => {
      const text = encodeLogicalMessage(ROW);
      const [header, ...rest] = text.split('\n');
      expect(JSON.parse(header)).toMatchObject({ v: 1, id: ROW.messageId, d: 'post-create' });
      expect(rest.join('\n')).toBe(ROW.payloadJson);
    });
  });

  describe(decodeLogicalMessage.name, () => {
    it('reads back every field, the payload text untouched', () => {
      const decoded = decodeLogicalMessage(Buffer.from(encodeLogicalMessage(ROW)));
      expect(decoded).toEqual({ ok: true, row: ROW });
    });

    it.each<[string, string]>([
      ['no envelope line', '{"v":1}'],
      ['an envelope that is not JSON', 'v=1\n{}'],
      ['an unknown version', '{"v":2,"id":"0190a6b2-7c1e-7a35-9a39-6b1c2f0e8d41"}\n{}'],
      ['no message id', '{"v":1,"d":"x","t":"T","k":"k","h":{},"o":"2026-12-01T10:00:00Z"}\n{}'],
      [
        'a header that is not a string',
        '{"v":1,"id":"0190a6b2-7c1e-7a35-9a39-6b1c2f0e8d41","d":"x","t":"T","k":"k","h":{"a":1},"o":"2026-12-01T10:00:00Z"}\n{}',
      ],
      [
        'a bad date',
        '{"v":1,"id":"0190a6b2-7c1e-7a35-9a39-6b1c2f0e8d41","d":"x","t":"T","k":"k","h":{},"o":"soon"}\n{}',
      ],
      ['null', 'null\n{}'],
    ])('refuses %s without throwing', (_, text) => {
      const decoded = decodeLogicalMessage(Buffer.from(text));
      expect(decoded.ok).toBe(false);
    });
  });
});
