import { Lsn } from './lsn';

/**
 * The frames of PostgreSQL's streaming replication protocol (inside CopyBoth) and the three pgoutput messages
 * the relay acts on. pgoutput's other messages (relations, row changes, origins, types) never reach an empty
 * publication's reader; they are reported as `other` and skipped.
 * https://www.postgresql.org/docs/current/protocol-replication.html
 * https://www.postgresql.org/docs/current/protocol-logicalrep-message-formats.html
 */
export type ServerFrame =
  /** XLogData: a pgoutput message; `lsn` is where PostgreSQL says it is in the log. */
  | { readonly kind: 'data'; readonly lsn: Lsn; readonly message: PgoutputMessage }
  /** Primary keepalive: the server has sent everything up to `walEnd`; `replyRequested`: answer now. */
  | { readonly kind: 'keepalive'; readonly walEnd: Lsn; readonly replyRequested: boolean }
  | { readonly kind: 'unknown'; readonly tag: number };

/** The pgoutput messages the relay reads. */
export type PgoutputMessage =
  | { readonly tag: 'begin'; readonly finalLsn: Lsn; readonly commitTimeMs: number; readonly xid: number }
  | { readonly tag: 'commit'; readonly commitLsn: Lsn; readonly endLsn: Lsn; readonly commitTimeMs: number }
  | {
      readonly tag: 'message';
      readonly transactional: boolean;
      readonly lsn: Lsn;
      readonly prefix: string;
      readonly content: Buffer;
    }
  | { readonly tag: 'other'; readonly code: number };

/** Microseconds from the Unix epoch to PostgreSQL's (2000-01-01). */
const POSTGRES_EPOCH_US = 946_684_800_000_000n;

/** Decodes one CopyData payload the server sent. */
export function decodeServerFrame(chunk: Buffer): ServerFrame {
  const tag = chunk[0];
  if (tag === 0x77 /* w */) {
    // dataStart (8), walEnd (8), sendTime (8), then the plugin's message
    return { kind: 'data', lsn: chunk.readBigUInt64BE(1), message: decodePgoutput(chunk.subarray(25)) };
  }
  if (tag === 0x6b /* k */) {
    // walEnd (8), sendTime (8), replyRequested (1)
    return { kind: 'keepalive', walEnd: chunk.readBigUInt64BE(1), replyRequested: chunk[17] === 1 };
  }
  return { kind: 'unknown', tag };
}

/** Decodes a pgoutput message (protocol version 1). */
export function decodePgoutput(buffer: Buffer): PgoutputMessage {
  const code = buffer[0];
  if (code === 0x42 /* B */) {
    return {
      tag: 'begin',
      finalLsn: buffer.readBigUInt64BE(1),
      commitTimeMs: pgTimeToMs(buffer.readBigInt64BE(9)),
      xid: buffer.readUInt32BE(17),
    };
  }
  if (code === 0x43 /* C */) {
    // flags (1), commit LSN (8), end LSN (8), commit time (8)
    return {
      tag: 'commit',
      commitLsn: buffer.readBigUInt64BE(2),
      endLsn: buffer.readBigUInt64BE(10),
      commitTimeMs: pgTimeToMs(buffer.readBigInt64BE(18)),
    };
  }
  if (code === 0x4d /* M */) {
    // flags (1), LSN (8), prefix (C string), content length (4), content
    const end = buffer.indexOf(0, 10);
    const length = buffer.readUInt32BE(end + 1);
    return {
      tag: 'message',
      transactional: (buffer[1] & 1) === 1,
      lsn: buffer.readBigUInt64BE(2),
      prefix: buffer.toString('utf8', 10, end),
      content: buffer.subarray(end + 5, end + 5 + length),
    };
  }
  return { tag: 'other', code };
}

/**
 * A standby status update: everything before `flushed` is done with, so the slot may forget it (PostgreSQL
 * then skips, on the next start, every transaction that committed before it). `replyRequested` asks the
 * server to answer at once.
 */
export function standbyStatusUpdate(flushed: Lsn, nowMs: number, replyRequested = false): Buffer {
  const frame = Buffer.alloc(34);
  frame[0] = 0x72; // r
  frame.writeBigUInt64BE(flushed, 1); // written
  frame.writeBigUInt64BE(flushed, 9); // flushed
  frame.writeBigUInt64BE(flushed, 17); // applied
  frame.writeBigInt64BE(BigInt(Math.round(nowMs)) * 1000n - POSTGRES_EPOCH_US, 25);
  frame[33] = replyRequested ? 1 : 0;
  return frame;
}

function pgTimeToMs(microsSincePostgresEpoch: bigint): number {
  return Number((microsSincePostgresEpoch + POSTGRES_EPOCH_US) / 1000n);
}
