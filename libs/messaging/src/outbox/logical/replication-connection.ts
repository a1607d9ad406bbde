import type { EventEmitter } from 'node:events';
import type * as Pg from 'pg';
import type { Client, ClientConfig } from 'pg';
import { requirePeer } from '../../common/optional-peer';
import { LogicalNames } from './logical-names';
import { Lsn } from './lsn';
import { decodeServerFrame, ServerFrame, standbyStatusUpdate } from './replication-protocol';

/** What the relay uses of pg's connection in replication mode (CopyBoth): local, as pg's types lack it. */
interface ReplicationWire extends EventEmitter {
  readonly stream: NodeJS.ReadableStream;
  sendCopyFromChunk(chunk: Buffer): void;
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

  private constructor(private readonly client: Client) {
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
  ): Promise<ReplicationConnection> {
    const pg = requirePeer<typeof Pg>('pg', "relay.mode 'logical'");
    const client = new pg.Client({ ...config, replication: 'database' } as ClientConfig);
    const connection = new ReplicationConnection(client);
    try {
      await client.connect();
    } catch (error) {
      await connection.close();
      throw error;
    }
    const wire = client.connection as unknown as ReplicationWire;
    connection.wire = wire;
    const streaming = new Promise<void>((resolve) => wire.once('replicationStart', () => resolve()));
    wire.on('copyData', ({ chunk }: { chunk: Buffer }) => onFrame(decodeServerFrame(chunk)));
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
    try {
      await Promise.race([streaming, replication.then(() => Promise.reject(new Error('no stream')))]);
    } catch (error) {
      await connection.close();
      throw error;
    }
    void connection.ended.then(() => connection.close());
    return connection;
  }

  /** Tells the server that everything before `flushed` is done with (see `standbyStatusUpdate`). */
  confirm(flushed: Lsn, nowMs: number, replyRequested = false): void {
    if (this.closing) return;
    try {
      this.wire?.sendCopyFromChunk(standbyStatusUpdate(flushed, nowMs, replyRequested));
    } catch {
      // The connection is going; `ended` says so.
    }
  }

  /** Stops reading (backpressure): the server waits, the slot keeps what it has not sent. */
  pause(): void {
    this.wire?.stream.pause();
  }

  resume(): void {
    this.wire?.stream.resume();
  }

  /** Closes the connection; `ended` resolves. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.end(undefined);
    await this.client.end().catch(() => undefined);
  }
}
