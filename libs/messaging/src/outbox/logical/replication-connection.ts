import type { EventEmitter } from 'node:events';
import type * as Pg from 'pg';
import type { Client, ClientConfig } from 'pg';
import { CancelTimer, Clock } from '../../common/clock';
import { requirePeer } from '../../common/optional-peer';
import { FrameGate } from './frame-gate';
import { LogicalNames } from './logical-names';
import { Lsn } from './lsn';
import { decodeServerFrame, ServerFrame, standbyStatusUpdate } from './replication-protocol';

/** What the relay uses of pg's connection in replication mode (CopyBoth): local, as pg's types lack it. */
interface ReplicationWire extends EventEmitter {
  readonly stream: NodeJS.ReadableStream;
  sendCopyFromChunk(chunk: Buffer): void;
}

/**
 * How long a replication connection waits for the server: no frame for `inactivityTimeoutMs` (the server
 * sends keepalives, and answers one at once when asked: asked after half of it) ends the stream, as
 * PostgreSQL's own `wal_receiver_timeout` does; a start that did not stream within it fails. Two
 * `wal_sender_timeout`s: the server ends its side after one.
 */
export interface ReplicationTimeouts {
  readonly clock: Clock;
  readonly inactivityTimeoutMs: number;
}

/** The error that ends a stream on which the server said nothing for too long. */
export class ReplicationInactivityError extends Error {
  constructor(readonly silentMs: number) {
    super(
      `no frame from PostgreSQL for ${silentMs} ms on the replication connection (2 × wal_sender_timeout): ` +
        'the link is taken for dead and the relay connects again',
    );
    this.name = 'ReplicationInactivityError';
  }
}

/**
 * A replication connection reading one logical slot with pgoutput, through pg's replication mode
 * (`replication: 'database'`, then `START_REPLICATION` and CopyBoth). Frames reach `onFrame` one at a time, in
 * the server's order, synchronously: a keepalive is seen only after every message sent before it.
 */
export class ReplicationConnection {
  /** Resolves when the stream ends: with the error that ended it, or undefined after `close()`. */
  readonly ended: Promise<Error | undefined>;
  private closing = false;
  private wire?: ReplicationWire;
  private end: (error: Error | undefined) => void = () => undefined;
  private lastFrameAt = 0;
  private pinged = false;
  private paused = false;
  private lastConfirmed = 0n;
  private watchdog?: CancelTimer;
  /** The link is taken for dead: closing destroys the socket instead of saying goodbye on it. */
  private dead = false;

  /** Frames of a socket read already made wait here while paused (the socket alone would deliver them). */
  private readonly gate: FrameGate;

  private constructor(
    private readonly client: Client,
    onFrame: (frame: ServerFrame) => void,
    private readonly timeouts?: ReplicationTimeouts,
  ) {
    this.gate = new FrameGate((chunk) => onFrame(decodeServerFrame(chunk)));
    this.ended = new Promise((resolve) => (this.end = resolve));
    client.on('error', (error: Error) => this.end(this.closing ? undefined : error));
    client.on('end', () =>
      this.end(this.closing ? undefined : new Error('the replication connection closed')),
    );
  }

  /**
   * Connects and starts streaming `names.slot` from its confirmed position (`0/0`: the slot's own, never
   * one of ours: a later one would skip what the slot still holds). Resolves once the server streams; rejects
   * with the server's error (a `code` SQLSTATE: 55006 the slot is in use, 42704 it does not exist, …).
   */
  static async start(
    config: ClientConfig,
    names: LogicalNames,
    onFrame: (frame: ServerFrame) => void,
    timeouts?: ReplicationTimeouts,
  ): Promise<ReplicationConnection> {
    const pg = requirePeer<typeof Pg>('pg', "relay.mode 'logical'");
    const client = new pg.Client({ ...config, replication: 'database' } as ClientConfig);
    const connection = new ReplicationConnection(client, onFrame, timeouts);
    try {
      await client.connect();
    } catch (error) {
      await connection.close();
      throw error;
    }
    const wire = client.connection as unknown as ReplicationWire;
    connection.wire = wire;
    const streaming = new Promise<void>((resolve) => wire.once('replicationStart', () => resolve()));
    wire.on('copyData', ({ chunk }: { chunk: Buffer }) => {
      connection.heard();
      connection.gate.push(chunk);
    });
    const options = [
      "proto_version '1'",
      `publication_names '"${names.publication}"'`,
      // pgoutput sends pg_logical_emit_message() messages only when asked to.
      "messages 'true'",
    ];
    // Ends when the stream ends (an error, or the connection closing).
    const replication = client.query(
      `START_REPLICATION SLOT "${names.slot}" LOGICAL 0/0 (${options.join(', ')})`,
    );
    replication.then(
      () => connection.end(connection.closing ? undefined : new Error('the replication stream ended')),
      (error: Error) => connection.end(connection.closing ? undefined : error),
    );
    // A start the server never answers (a link that drops packets) fails after the inactivity timeout.
    let cancelStart: CancelTimer | undefined;
    const startTimeout = new Promise<never>((_, reject) => {
      if (!timeouts) return;
      const ms = timeouts.inactivityTimeoutMs;
      cancelStart = timeouts.clock.setTimeout(() => {
        connection.dead = true;
        reject(new ReplicationInactivityError(ms));
      }, ms);
    });
    try {
      await Promise.race([
        streaming,
        startTimeout,
        replication.then(() => Promise.reject(new Error('no stream'))),
      ]);
    } catch (error) {
      await connection.close();
      throw error;
    } finally {
      cancelStart?.();
    }
    connection.watch();
    void connection.ended.then(() => connection.close());
    return connection;
  }

  /** A frame came: the link is alive. */
  private heard(): void {
    this.lastFrameAt = this.timeouts?.clock.now() ?? 0;
    this.pinged = false;
  }

  /** Checks the link a few times per timeout: asks for a keepalive at half of it, ends the stream at all of it. */
  private watch(): void {
    const timeouts = this.timeouts;
    if (!timeouts) return;
    const { clock, inactivityTimeoutMs } = timeouts;
    this.heard();
    this.watchdog = clock.setInterval(
      () => {
        if (this.closing) return;
        // Paused, the frames wait in the socket unread: silence is ours, not the server's.
        if (this.paused) return this.heard();
        const silentMs = clock.now() - this.lastFrameAt;
        if (silentMs >= inactivityTimeoutMs) {
          this.dead = true;
          this.end(new ReplicationInactivityError(silentMs));
          return;
        }
        if (!this.pinged && silentMs >= inactivityTimeoutMs / 2) {
          this.pinged = true;
          this.confirm(this.lastConfirmed, clock.now(), true);
        }
      },
      Math.max(100, Math.floor(inactivityTimeoutMs / 8)),
    );
  }

  /** Tells the server that everything before `flushed` is done with (see `standbyStatusUpdate`). */
  confirm(flushed: Lsn, nowMs: number, replyRequested = false): void {
    if (this.closing) return;
    if (flushed > this.lastConfirmed) this.lastConfirmed = flushed;
    try {
      this.wire?.sendCopyFromChunk(standbyStatusUpdate(flushed, nowMs, replyRequested));
    } catch {
      // The connection is going; `ended` says so.
    }
  }

  /** Stops reading (backpressure): the server waits, the slot keeps what it has not sent. */
  pause(): void {
    this.paused = true;
    this.gate.pause();
    this.wire?.stream.pause();
  }

  /** Reads again: first the frames held since the pause, then the socket, unless one of them paused again. */
  resume(): void {
    this.heard();
    if (!this.gate.resume()) return;
    this.paused = false;
    this.wire?.stream.resume();
  }

  /** Closes the connection; `ended` resolves. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.watchdog?.();
    this.end(undefined);
    const ending = this.client.end().catch(() => undefined);
    // On a dead link the goodbye would wait for ever (nothing answers, nothing resets).
    if (this.dead)
      (
        this.client as unknown as { connection?: { stream?: { destroy(): void } } }
      ).connection?.stream?.destroy();
    await ending;
  }
}
