import { createServer, Server, Socket, connect } from 'node:net';
import { freePort } from '../../tools/infra/ports';
import { Direction, Frame, frameReader, FrameReader, WireProtocol } from './fault-proxy-frames';

export type { Direction, Frame, WireProtocol } from './fault-proxy-frames';

/** Where a proxy listens and what it forwards to. */
export interface FaultProxyOptions {
  /** The server behind the proxy. */
  readonly target: { readonly host: string; readonly port: number };
  /** How to read frames (for frame rules). Default `raw`: chunks as they come. */
  readonly protocol?: WireProtocol;
  /** Port on 127.0.0.1. Default: a free one. */
  readonly port?: number;
  /** For messages: `Kafka`, `PostgreSQL`. Default the protocol. */
  readonly name?: string;
}

/**
 * What a frame rule does to a frame it matches: `drop` forwards nothing of it (the connection goes on),
 * `cut` cuts the connection before the frame passes, `cut-after` lets it pass and then cuts, `delayMs`
 * holds it (and the frames behind it) that long.
 */
export type FrameAction = 'drop' | 'cut' | 'cut-after' | { readonly delayMs: number };

/** A fault aimed at frames: see `FaultProxy.on`. */
export interface FrameRule {
  readonly direction: Direction;
  readonly match: (frame: Frame) => boolean;
  readonly action: FrameAction;
  /** How many matching frames it acts on; then it is spent. Default 1. */
  readonly times?: number;
}

/** What the proxy did so far. */
export interface FaultProxyStats {
  /** Connections accepted. */
  connections: number;
  /** Connections cut by a fault (`cut`, `cut-after`, `cutAfter`, `cutAll`, the end of a black hole). */
  cuts: number;
  /** Frames dropped by a rule. */
  dropped: number;
  /** Frames or chunks held back by a delay (`delay`, or a rule's `delayMs`). */
  delayed: number;
  /** Chunks swallowed by a black hole. */
  swallowed: number;
}

interface ActiveRule extends FrameRule {
  remaining: number;
  readonly hits: Frame[];
  readonly done: (frames: Frame[]) => void;
}

/** One proxied connection: the client's socket, ours to the server, and what waits to be written to each. */
interface Link {
  readonly client: Socket;
  readonly server: Socket;
  readonly reader: FrameReader;
  readonly queues: Record<Direction, DelayQueue>;
  swallowed: boolean;
  closed: boolean;
}

/**
 * A TCP proxy for tests that lose answers: it forwards a client's connections to a server and, scripted per
 * test, refuses new connections, cuts connections (now, or after so many bytes), delays traffic, black-holes
 * it (accepts and reads, never answers, then cuts), and — reading the protocol — drops, delays or cuts at one
 * frame: the answer to a Kafka Produce after the broker wrote it, a publisher confirm, the answer to a COMMIT
 * the database executed. No npm package does the frame part (Toxiproxy's toxics are byte-level and need its
 * server), hence this one on `node:net`.
 */
export class FaultProxy {
  readonly stats: FaultProxyStats = { connections: 0, cuts: 0, dropped: 0, delayed: 0, swallowed: 0 };
  private readonly links = new Set<Link>();
  private rules: ActiveRule[] = [];
  private readonly delays: Record<Direction, number> = { upstream: 0, downstream: 0 };
  private readonly cutBudget: Partial<Record<Direction, number>> = {};
  private blackHoleTimer?: NodeJS.Timeout;
  private blackHoling = false;
  private silentBlackHole = false;
  /** The listening server; none while refusing. */
  private server?: Server;

  private constructor(
    readonly port: number,
    private readonly options: FaultProxyOptions,
  ) {}

  /** Starts a proxy to `options.target`; resolves once it listens. */
  static async start(options: FaultProxyOptions): Promise<FaultProxy> {
    const proxy = new FaultProxy(options.port ?? (await freePort()), options);
    await proxy.listen();
    return proxy;
  }

  /** `127.0.0.1:port`. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get name(): string {
    return this.options.name ?? this.options.protocol ?? 'raw';
  }

  /** Connections open now. */
  get openConnections(): number {
    return this.links.size;
  }

  /**
   * Acts on frames matching `rule` (needs a `protocol`); resolves with them once the rule is spent (or with
   * those so far at `heal()`). E.g. lose the answer to the next Produce after the broker wrote it:
   * `proxy.on({ direction: 'downstream', match: (f) => f.apiKey === 0, action: 'drop' })`.
   */
  on(rule: FrameRule): Promise<Frame[]> {
    return new Promise((resolve) => {
      this.rules.push({ ...rule, remaining: rule.times ?? 1, hits: [], done: resolve });
    });
  }

  /** New connections are refused (the port stops listening) until `heal()`; open ones go on. */
  async refuse(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    // Stops listening at once; its connections stay (the close callback would wait for them).
    server?.close();
    await new Promise((resolve) => setImmediate(resolve));
  }

  /** Every byte each way is held `ms` longer, until `heal()`. */
  delay(ms: number, direction: Direction | 'both' = 'both'): void {
    if (direction !== 'downstream') this.delays.upstream = ms;
    if (direction !== 'upstream') this.delays.downstream = ms;
  }

  /** The connection that carries the `bytes`-th byte from now in `direction` is cut right after it. */
  cutAfter(bytes: number, direction: Direction): void {
    this.cutBudget[direction] = bytes;
  }

  /** Cuts every open connection now, as a network failure would (a reset); returns how many. */
  cutAll(): number {
    const open = [...this.links];
    open.forEach((link) => this.cut(link));
    return open.length;
  }

  /**
   * Black-holes the link: open and new connections are accepted and read, nothing reaches the other side.
   * When it ends (after `ms`, or at `heal()`), the connections it swallowed bytes of are cut: like peers
   * that gave up on a silent network. `silent`: a side that closes meanwhile is not told to the other either
   * (a link that drops packets and sends no reset), until the black hole ends.
   */
  blackHole(ms?: number, options: { readonly silent?: boolean } = {}): void {
    this.blackHoling = true;
    this.silentBlackHole = options.silent === true;
    clearTimeout(this.blackHoleTimer);
    if (ms !== undefined) this.blackHoleTimer = setTimeout(() => this.endBlackHole(), ms).unref();
  }

  /** Lifts every fault: listens again, ends a black hole, no delays, no pending cuts, no rules. */
  async heal(): Promise<void> {
    this.endBlackHole();
    this.delays.upstream = this.delays.downstream = 0;
    delete this.cutBudget.upstream;
    delete this.cutBudget.downstream;
    const rules = this.rules;
    this.rules = [];
    rules.forEach((rule) => rule.done(rule.hits));
    await this.listen();
  }

  /** Stops listening and cuts every connection. */
  async close(): Promise<void> {
    await this.heal();
    await this.refuse();
    this.cutAll();
  }

  /** Listens on the port (again): a new server each time, so that a refusal leaves open connections be. */
  private async listen(): Promise<void> {
    if (this.server) return;
    const server = createServer({ noDelay: true }, (socket) => this.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
  }

  private endBlackHole(): void {
    clearTimeout(this.blackHoleTimer);
    this.blackHoling = false;
    this.silentBlackHole = false;
    [...this.links].filter((link) => link.swallowed).forEach((link) => this.cut(link));
  }

  private accept(client: Socket): void {
    this.stats.connections += 1;
    const server = connect({ host: this.options.target.host, port: this.options.target.port, noDelay: true });
    const link: Link = {
      client,
      server,
      reader: frameReader(this.options.protocol ?? 'raw'),
      queues: { upstream: new DelayQueue(server), downstream: new DelayQueue(client) },
      swallowed: false,
      closed: false,
    };
    this.links.add(link);
    client.on('data', (chunk: Buffer) => this.pass(link, 'upstream', chunk));
    server.on('data', (chunk: Buffer) => this.pass(link, 'downstream', chunk));
    // One side gone: the other goes too, once what waits for it is written.
    const close = (from: Direction) => () => this.closeLink(link, from);
    client.on('close', close('upstream'));
    server.on('close', close('downstream'));
    client.on('error', () => undefined);
    server.on('error', () => undefined);
  }

  private closeLink(link: Link, from: Direction): void {
    if (link.closed) return;
    if (this.blackHoling && this.silentBlackHole) {
      link.swallowed = true; // cut when the black hole ends
      return;
    }
    link.closed = true;
    this.links.delete(link);
    // What the closed side sent still goes to the other side; then that side is closed too.
    (from === 'upstream' ? link.queues.upstream : link.queues.downstream).closeWhenFlushed();
  }

  private pass(link: Link, direction: Direction, chunk: Buffer): void {
    if (link.closed) return;
    if (this.blackHoling || link.swallowed) {
      link.swallowed = true;
      this.stats.swallowed += 1;
      return;
    }
    const budget = this.cutBudget[direction];
    if (budget !== undefined) {
      if (chunk.length >= budget) {
        delete this.cutBudget[direction];
        this.send(link, direction, chunk.subarray(0, budget));
        this.cut(link);
        return;
      }
      this.cutBudget[direction] = budget - chunk.length;
    }
    for (const frame of link.reader.read(direction, chunk)) {
      const rule = this.rules.find((r) => r.direction === direction && r.match(frame));
      if (!rule) {
        this.send(link, direction, frame.bytes);
        continue;
      }
      this.spend(rule, frame);
      const action = rule.action;
      if (action === 'drop') this.stats.dropped += 1;
      else if (action === 'cut') return this.cut(link);
      else if (action === 'cut-after') {
        this.send(link, direction, frame.bytes);
        return this.cut(link);
      } else {
        this.send(link, direction, frame.bytes, action.delayMs);
      }
    }
  }

  private spend(rule: ActiveRule, frame: Frame): void {
    rule.hits.push(frame);
    rule.remaining -= 1;
    if (rule.remaining > 0) return;
    this.rules = this.rules.filter((r) => r !== rule);
    rule.done(rule.hits);
  }

  private send(link: Link, direction: Direction, bytes: Buffer, extraDelayMs = 0): void {
    const delayMs = this.delays[direction] + extraDelayMs;
    if (delayMs > 0) this.stats.delayed += 1;
    link.queues[direction].write(bytes, delayMs);
  }

  /** Cuts a connection once what was let through before the cut is written. */
  private cut(link: Link): void {
    if (link.closed) return;
    link.closed = true;
    this.links.delete(link);
    this.stats.cuts += 1;
    link.queues.upstream.closeWhenFlushed();
    link.queues.downstream.closeWhenFlushed();
  }
}

/** Writes to one socket in order, each chunk no earlier than its delay allows. */
class DelayQueue {
  private readonly waiting: Array<{ readonly at: number; readonly bytes: Buffer }> = [];
  private timer?: NodeJS.Timeout;
  private then?: () => void;

  constructor(private readonly socket: Socket) {}

  write(bytes: Buffer, delayMs: number): void {
    if (this.then) return;
    const last = this.waiting.at(-1)?.at ?? 0;
    if (delayMs <= 0 && this.waiting.length === 0) {
      this.socket.write(bytes);
      return;
    }
    this.waiting.push({ at: Math.max(Date.now() + delayMs, last), bytes });
    this.schedule();
  }

  /**
   * Closes the socket once what waits is written: FIN after the last byte (a reset could discard bytes the
   * peer has not read yet, and a cut after a frame must deliver the frame), then the socket is destroyed.
   */
  closeWhenFlushed(): void {
    if (this.then) return;
    this.then = () => {
      this.socket.end(() => this.socket.destroy());
      setTimeout(() => this.socket.destroy(), 1_000).unref();
    };
    if (this.waiting.length === 0) this.then();
  }

  private schedule(): void {
    if (this.timer || this.waiting.length === 0) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        const now = Date.now();
        while (this.waiting.length > 0 && this.waiting[0].at <= now) {
          this.socket.write((this.waiting.shift() as { bytes: Buffer }).bytes);
        }
        if (this.waiting.length > 0) this.schedule();
        else this.then?.();
      },
      Math.max(0, this.waiting[0].at - Date.now()),
    );
  }
}
