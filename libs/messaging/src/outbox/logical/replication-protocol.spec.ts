import { decodePgoutput, decodeServerFrame, standbyStatusUpdate } from './replication-protocol';
import { formatLsn, parseLsn } from './lsn';

/** 2026-12-01T10:00:00.123Z in microseconds since 2000-01-01, as PostgreSQL sends times. */
const PG_TIME = BigInt(Date.parse('2026-12-01T10:00:00.123Z')) * 1000n - 946_684_800_000_000n;

function int64(value: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(value);
  return b;
}

describe('replication protocol', () => {
  describe(decodeServerFrame.name, () => {
    it('reads XLogData with its pgoutput message', () => {
      const begin = Buffer.concat([
        Buffer.from('B'),
        int64(0x1_5000_0000n),
        int64(PG_TIME),
        Buffer.from([0, 0, 2, 0xd4]),
      ]);
      const frame = decodeServerFrame(
        Buffer.concat([
          Buffer.from('w'),
          int64(0x1_5000_0000n),
          int64(0x1_5000_0100n),
          int64(PG_TIME),
          begin,
        ]),
      );
      expect(frame).toEqual({
        kind: 'data',
        lsn: 0x1_5000_0000n,
        message: {
          tag: 'begin',
          finalLsn: 0x1_5000_0000n,
          commitTimeMs: Date.parse('2026-12-01T10:00:00.123Z'),
          xid: 724,
        },
      });
    });

    it('reads a keepalive and whether it asks for an answer', () => {
      const frame = decodeServerFrame(
        Buffer.concat([Buffer.from('k'), int64(42n), int64(PG_TIME), Buffer.from([1])]),
      );
      expect(frame).toEqual({ kind: 'keepalive', walEnd: 42n, replyRequested: true });
    });

    it('names what it does not know', () => {
      expect(decodeServerFrame(Buffer.from('z'))).toEqual({ kind: 'unknown', tag: 0x7a });
    });
  });

  describe(decodePgoutput.name, () => {
    it('reads a commit', () => {
      const commit = Buffer.concat([
        Buffer.from('C'),
        Buffer.from([0]),
        int64(100n),
        int64(148n),
        int64(PG_TIME),
      ]);
      expect(decodePgoutput(commit)).toEqual({
        tag: 'commit',
        commitLsn: 100n,
        endLsn: 148n,
        commitTimeMs: Date.parse('2026-12-01T10:00:00.123Z'),
      });
    });

    it('reads a logical decoding message: prefix and content', () => {
      const content = Buffer.from('{"v":1}\n{}');
      const length = Buffer.alloc(4);
      length.writeUInt32BE(content.length);
      const message = Buffer.concat([
        Buffer.from('M'),
        Buffer.from([1]),
        int64(77n),
        Buffer.from('nest-reliable-messaging:s\0'),
        length,
        content,
      ]);
      expect(decodePgoutput(message)).toEqual({
        tag: 'message',
        transactional: true,
        lsn: 77n,
        prefix: 'nest-reliable-messaging:s',
        content,
      });
    });

    it('reports the messages an empty publication never sends as other', () => {
      expect(decodePgoutput(Buffer.from('R'))).toEqual({ tag: 'other', code: 0x52 });
    });
  });

  describe(standbyStatusUpdate.name, () => {
    it('reports the position as written, flushed and applied, with the time', () => {
      const frame = standbyStatusUpdate(0x16_b374_d848n, Date.parse('2026-12-01T10:00:00.123Z'), true);
      expect(frame.length).toBe(34);
      expect(String.fromCharCode(frame[0])).toBe('r');
      expect([1, 9, 17].map((at) => frame.readBigUInt64BE(at))).toEqual([
        0x16_b374_d848n,
        0x16_b374_d848n,
        0x16_b374_d848n,
      ]);
      expect(frame.readBigInt64BE(25)).toBe(PG_TIME);
      expect(frame[33]).toBe(1);
    });
  });

  describe('LSN text', () => {
    it('parses and formats PostgreSQL text form', () => {
      expect(parseLsn('16/B374D848')).toBe(0x16_b374_d848n);
      expect(formatLsn(0x16_b374_d848n)).toBe('16/B374D848');
      expect(formatLsn(parseLsn('0/0'))).toBe('0/0');
      expect(() => parseLsn('16-B374')).toThrow('Not a WAL position');
    });
  });
});
