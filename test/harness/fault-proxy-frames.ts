/**
 * The wire protocols the fault proxy can read, enough to pick a frame out of the stream: Kafka's
 * length-prefixed requests and responses (matched by correlation id), PostgreSQL's messages (a response runs
 * up to ReadyForQuery and answers the oldest open request), MySQL/MariaDB packets (a response answers the last
 * command) and AMQP 0-9-1 frames (methods by name). No frame is changed: the proxy only forwards, holds, drops
 * or cuts.
 */
export type WireProtocol = 'raw' | 'kafka' | 'postgres' | 'mysql' | 'amqp';

/** `upstream`: client → server; `downstream`: server → client. */
export type Direction = 'upstream' | 'downstream';

/** One frame of a connection, as read. */
export interface Frame {
  readonly direction: Direction;
  readonly bytes: Buffer;
  /** In the protocol's words: `Produce`, `Metadata`; `Q`, `Z`, `C`; `COM_QUERY`; `basic.publish`, `basic.ack`. */
  readonly name: string;
  /** SQL of a query (PostgreSQL `Q`/`P`, the `P` before a `Sync`; MySQL `COM_QUERY`/`COM_STMT_PREPARE`). */
  readonly query?: string;
  /** A downstream frame's request: Kafka by correlation id, PostgreSQL and MySQL by order. */
  readonly request?: Frame;
  /** Kafka: the request's api key (0 = Produce). */
  readonly apiKey?: number;
  /** AMQP: the frame's channel. */
  readonly channel?: number;
}

/** Reads one connection's two streams; keeps what is not a whole frame yet. */
export interface FrameReader {
  read(direction: Direction, chunk: Buffer): Frame[];
}

/** A reader for `protocol`, for one connection (`raw` passes chunks as they come). */
export function frameReader(protocol: WireProtocol): FrameReader {
  switch (protocol) {
    case 'raw':
      return { read: (direction, bytes) => [{ direction, bytes, name: 'bytes' }] };
    case 'kafka':
      return new KafkaReader();
    case 'postgres':
      return new PostgresReader();
    case 'mysql':
      return new MysqlReader();
    case 'amqp':
      return new AmqpReader();
  }
}

/** How many bytes the frame at the start of `buffer` has; undefined while too few bytes came to tell. */
type SizeOf = (buffer: Buffer) => number | undefined;

/** Cuts a stream into whole frames, one at a time (a frame's size may depend on the frames before it). */
class Splitter {
  private rest: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): void {
    this.rest = this.rest.length === 0 ? chunk : Buffer.concat([this.rest, chunk]);
  }

  /** The next whole frame, or undefined. */
  next(sizeOf: SizeOf): Buffer | undefined {
    const size = this.rest.length === 0 ? undefined : sizeOf(this.rest);
    if (size === undefined || this.rest.length < size) return undefined;
    const frame = this.rest.subarray(0, size);
    this.rest = this.rest.subarray(size);
    return frame;
  }

  /** Every whole frame. */
  all(chunk: Buffer, sizeOf: SizeOf): Buffer[] {
    this.push(chunk);
    const frames: Buffer[] = [];
    for (let frame = this.next(sizeOf); frame; frame = this.next(sizeOf)) frames.push(frame);
    return frames;
  }
}

const KAFKA_APIS: Readonly<Record<number, string>> = {
  0: 'Produce',
  1: 'Fetch',
  2: 'ListOffsets',
  3: 'Metadata',
  8: 'OffsetCommit',
  9: 'OffsetFetch',
  10: 'FindCoordinator',
  11: 'JoinGroup',
  12: 'Heartbeat',
  14: 'SyncGroup',
  18: 'ApiVersions',
  22: 'InitProducerId',
};

/** Kafka: `size:int32` then, upstream, `api_key:int16 api_version:int16 correlation_id:int32`; downstream `correlation_id:int32`. */
class KafkaReader implements FrameReader {
  private readonly splitters = { upstream: new Splitter(), downstream: new Splitter() };
  private readonly open = new Map<number, Frame>();

  read(direction: Direction, chunk: Buffer): Frame[] {
    const sizeOf: SizeOf = (b) => (b.length < 4 ? undefined : 4 + b.readInt32BE(0));
    return this.splitters[direction].all(chunk, sizeOf).map((bytes) => {
      if (direction === 'upstream') {
        const apiKey = bytes.readInt16BE(4);
        const frame: Frame = { direction, bytes, apiKey, name: KAFKA_APIS[apiKey] ?? `api ${apiKey}` };
        this.open.set(bytes.readInt32BE(8), frame);
        return frame;
      }
      const correlationId = bytes.readInt32BE(4);
      const request = this.open.get(correlationId);
      this.open.delete(correlationId);
      return { direction, bytes, request, apiKey: request?.apiKey, name: `${request?.name ?? '?'} response` };
    });
  }
}

/** PostgreSQL request codes of the untyped first messages. */
const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;

/**
 * PostgreSQL: the client's first message is untyped (`length:int32 code:int32 …`), later ones typed
 * (`type:byte length:int32 …`, the length counting itself). An SSL or GSS request is answered with one byte.
 * A `Q`, a `Sync` and the startup each open a request; the server's messages answer the oldest open one,
 * which its `ReadyForQuery` (`Z`) closes.
 */
class PostgresReader implements FrameReader {
  private readonly splitters = { upstream: new Splitter(), downstream: new Splitter() };
  private untyped = true;
  private oneByteAnswers = 0;
  private readonly open: Frame[] = [];
  private lastParse?: string;

  read(direction: Direction, chunk: Buffer): Frame[] {
    return direction === 'upstream' ? this.readUpstream(chunk) : this.readDownstream(chunk);
  }

  private readUpstream(chunk: Buffer): Frame[] {
    const frames: Frame[] = [];
    const sizeOf: SizeOf = (b) =>
      this.untyped
        ? b.length < 4
          ? undefined
          : b.readInt32BE(0)
        : b.length < 5
          ? undefined
          : 1 + b.readInt32BE(1);
    const splitter = this.splitters.upstream;
    splitter.push(chunk);
    for (let bytes = splitter.next(sizeOf); bytes; bytes = splitter.next(sizeOf)) {
      frames.push(this.upstreamFrame(bytes));
    }
    return frames;
  }

  private upstreamFrame(bytes: Buffer): Frame {
    if (this.untyped) {
      const code = bytes.readInt32BE(4);
      if (code === SSL_REQUEST || code === GSS_REQUEST) {
        this.oneByteAnswers += 1;
        return { direction: 'upstream', bytes, name: code === SSL_REQUEST ? 'SSLRequest' : 'GSSENCRequest' };
      }
      this.untyped = false;
      const frame: Frame = { direction: 'upstream', bytes, name: 'startup' };
      this.open.push(frame);
      return frame;
    }
    const name = String.fromCharCode(bytes[0]);
    let query: string | undefined;
    if (name === 'Q') query = cString(bytes, 5);
    if (name === 'P') this.lastParse = cString(bytes, 5 + Buffer.byteLength(cString(bytes, 5)) + 1);
    if (name === 'S') query = this.lastParse;
    const frame: Frame = { direction: 'upstream', bytes, name, query };
    if (name === 'Q' || name === 'S') this.open.push(frame);
    return frame;
  }

  private readDownstream(chunk: Buffer): Frame[] {
    const frames: Frame[] = [];
    let rest = chunk;
    while (this.oneByteAnswers > 0 && rest.length > 0) {
      this.oneByteAnswers -= 1;
      frames.push({ direction: 'downstream', bytes: rest.subarray(0, 1), name: 'SSL answer' });
      rest = rest.subarray(1);
    }
    const sizeOf: SizeOf = (b) => (b.length < 5 ? undefined : 1 + b.readInt32BE(1));
    for (const bytes of this.splitters.downstream.all(rest, sizeOf)) {
      const name = String.fromCharCode(bytes[0]);
      const request = this.open[0];
      if (name === 'Z') this.open.shift();
      frames.push({ direction: 'downstream', bytes, name, request, query: request?.query });
    }
    return frames;
  }
}

const MYSQL_COMMANDS: Readonly<Record<number, string>> = {
  0x01: 'COM_QUIT',
  0x03: 'COM_QUERY',
  0x0e: 'COM_PING',
  0x16: 'COM_STMT_PREPARE',
  0x17: 'COM_STMT_EXECUTE',
  0x19: 'COM_STMT_CLOSE',
};

/** MySQL/MariaDB: packets of `length:int24le sequence:byte payload`; a client packet of sequence 0 is a command. */
class MysqlReader implements FrameReader {
  private readonly splitters = { upstream: new Splitter(), downstream: new Splitter() };
  private command?: Frame;

  read(direction: Direction, chunk: Buffer): Frame[] {
    const sizeOf: SizeOf = (b) => (b.length < 4 ? undefined : 4 + b.readUIntLE(0, 3));
    return this.splitters[direction].all(chunk, sizeOf).map((bytes) => {
      if (direction === 'downstream') {
        return { direction, bytes, name: 'packet', request: this.command, query: this.command?.query };
      }
      if (bytes[3] !== 0 || bytes.length < 5) return { direction, bytes, name: 'packet' };
      const code = bytes[4];
      const name = MYSQL_COMMANDS[code] ?? `command ${code}`;
      const query = code === 0x03 || code === 0x16 ? bytes.subarray(5).toString('utf8') : undefined;
      this.command = { direction, bytes, name, query };
      return this.command;
    });
  }
}

const AMQP_METHODS: Readonly<Record<string, string>> = {
  '10.10': 'connection.start',
  '10.50': 'connection.close',
  '20.10': 'channel.open',
  '20.40': 'channel.close',
  '60.20': 'basic.consume',
  '60.40': 'basic.publish',
  '60.50': 'basic.return',
  '60.60': 'basic.deliver',
  '60.80': 'basic.ack',
  '60.120': 'basic.nack',
  '85.10': 'confirm.select',
};

const AMQP_TYPES: Readonly<Record<number, string>> = {
  2: 'content header',
  3: 'content body',
  8: 'heartbeat',
};

/** AMQP 0-9-1: the client's 8-byte protocol header, then frames `type:byte channel:int16 size:int32 payload end:byte`. */
class AmqpReader implements FrameReader {
  private readonly splitters = { upstream: new Splitter(), downstream: new Splitter() };
  private header = true;

  read(direction: Direction, chunk: Buffer): Frame[] {
    const sizeOf: SizeOf = (b) => {
      if (direction === 'upstream' && this.header) return 8;
      return b.length < 7 ? undefined : 8 + b.readUInt32BE(3);
    };
    const frames: Frame[] = [];
    const splitter = this.splitters[direction];
    splitter.push(chunk);
    for (let bytes = splitter.next(sizeOf); bytes; bytes = splitter.next(sizeOf)) {
      frames.push(this.frame(direction, bytes));
    }
    return frames;
  }

  private frame(direction: Direction, bytes: Buffer): Frame {
    if (direction === 'upstream' && this.header) {
      this.header = false;
      return { direction, bytes, name: 'protocol header' };
    }
    const type = bytes[0];
    const channel = bytes.readUInt16BE(1);
    if (type !== 1) return { direction, bytes, channel, name: AMQP_TYPES[type] ?? `frame ${type}` };
    const method = `${bytes.readUInt16BE(7)}.${bytes.readUInt16BE(9)}`;
    return { direction, bytes, channel, name: AMQP_METHODS[method] ?? `method ${method}` };
  }
}

/** The zero-terminated string at `offset`. */
function cString(bytes: Buffer, offset: number): string {
  const end = bytes.indexOf(0, offset);
  return bytes.subarray(offset, end < 0 ? bytes.length : end).toString('utf8');
}
