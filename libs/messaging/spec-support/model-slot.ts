import { Logger } from '@nestjs/common';
import { FakeClock } from '../src/common/fake-clock';
import { MessageTracing } from '../src/observability/message-tracing';
import { MessagingMetrics } from '../src/observability/messaging-metrics';
import { resolveMessagingOptions } from '../src/options/resolve-messaging-options';
import { RelayOptions } from '../src/messaging-options.interface';
import { encodeLogicalMessage } from '../src/outbox/logical/logical-message-codec';
import { logicalNames } from '../src/outbox/logical/logical-names';
import type { MessageToPark } from '../src/outbox/logical/parked-messages';
import type { ServerFrame } from '../src/outbox/logical/replication-protocol';
import { LogicalRoundResult, StreamSession } from '../src/outbox/logical/stream-session';
import { NewOutboxRow } from '../src/outbox/outbox-row';
import { JournalEntry } from './relay-journal';
import { ScriptedAnswer, ScriptedBroker } from './scripted-broker';
import { turnless } from './turnless-clock';

/** A message of a committed transaction in the model log: ours (a row), or raw content under a prefix. */
type LoggedMessage =
  | { readonly row: NewOutboxRow }
  | { readonly raw: Buffer; readonly prefix?: string; readonly transactional?: boolean };

/** A transaction of the model log: where it ends, when it committed, its messages. */
interface LoggedTransaction {
  readonly endLsn: bigint;
  readonly commitTimeMs: number;
  readonly messages: readonly LoggedMessage[];
}

/** A row of the model outbox table that parking wrote (or a poll-mode writer, `external`). */
export interface ModelParkedRow extends MessageToPark {
  sent: boolean;
  readonly external?: boolean;
}

/** The outbox table as parking sees it: what was parked, in order; a switch that makes parking fail. */
export class ModelParking {
  readonly rows: ModelParkedRow[] = [];
  failing = false;
  calls = 0;

  /** Parks in order, or throws while `failing`; a message id parked before is left as it is. */
  park(messages: readonly MessageToPark[]): Promise<{ idConflicts: [] }> {
    this.calls += 1;
    if (this.failing) return Promise.reject(new Error('the database is away (model)'));
    for (const message of messages) {
      if (!this.rows.some((r) => r.row.messageId === message.row.messageId))
        this.rows.push({ ...message, sent: false });
    }
    return Promise.resolve({ idConflicts: [] });
  }

  pendingKeys(): Promise<Set<string>> {
    return Promise.resolve(
      new Set(this.rows.filter((r) => !r.sent).map((r) => `${r.row.destination}\u0000${r.row.key}`)),
    );
  }

  /** A poll-mode writer's pending row of `key` (a rolling change of mode). */
  addExternal(row: NewOutboxRow): void {
    this.rows.push({ row, error: '', sent: false, external: true });
  }
}

/** The replication connection's side the session talks to: what it confirmed, whether it reads. */
export class ModelConnection {
  readonly confirmed: bigint[] = [];
  paused = false;
  pauses = 0;
  closed = false;

  constructor(private readonly onResume: () => void) {}

  confirm(lsn: bigint): void {
    this.confirmed.push(lsn);
  }
  pause(): void {
    if (!this.paused) this.pauses += 1;
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
    this.onResume();
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
  /** The last position confirmed (the slot's). */
  get position(): bigint {
    return this.confirmed.reduce((a, b) => (b > a ? b : a), 0n);
  }
}

/** What a model logical world is made of. */
export interface LogicalModelOptions {
  readonly relay?: Partial<RelayOptions>;
  readonly script?: readonly ScriptedAnswer[];
  /** Keys with pending outbox rows when the session starts. */
  readonly parkedKeys?: readonly string[];
}

/**
 * A logical relay's session over a model slot: transactions committed into a model log, streamed to the
 * session frame by frame as a walsender would (while it reads; a paused connection holds them), answered by a
 * `ScriptedBroker`, parked into a `ModelParking`. `crash()` drops the session as a killed process does and
 * starts a new one from the position it confirmed, streaming again what follows. Unit specs only.
 */
export class LogicalModel {
  readonly clock = new FakeClock();
  readonly journal: JournalEntry[] = [];
  readonly broker: ScriptedBroker;
  readonly parking = new ModelParking();
  readonly names = logicalNames('model');
  readonly log: LoggedTransaction[] = [];
  readonly rounds: LogicalRoundResult[] = [];
  /** What the session logged as errors, in order. */
  readonly errors: string[] = [];
  session!: StreamSession;
  connection!: ModelConnection;
  /** Throws from the report listener (a round listener that throws). */
  reportThrows = false;
  private lsn = 0x1000n;
  private sent = 0;
  private readonly options: LogicalModelOptions;
  private readonly resolved;
  private messageSeq = 0;

  constructor(options: LogicalModelOptions = {}) {
    this.options = options;
    this.broker = new ScriptedBroker(options.script, this.journal, this.clock);
    this.resolved = resolveMessagingOptions({
      serviceName: 'model',
      transport: { kind: 'rabbitmq', url: 'amqp://localhost' },
      relay: { mode: 'logical', retryInitialDelayMs: 100, retryMaxDelayMs: 400, ...options.relay },
    });
    this.start(0n, new Set(options.parkedKeys ?? []));
  }

  /** A row of ours: `destination`'s key, a new message id, `type` (default OrderPlaced). */
  row(key: string, type = 'OrderPlaced', destination = 'orders'): NewOutboxRow {
    this.messageSeq += 1;
    return {
      messageId: `00000000-0000-7000-8000-${this.messageSeq.toString().padStart(12, '0')}`,
      destination,
      type,
      key,
      headers: {},
      payloadJson: JSON.stringify({ n: this.messageSeq }),
      occurredAt: new Date(0),
    };
  }

  /** Commits a transaction with these messages (none: a transaction of other writes) and streams it. */
  commit(messages: ReadonlyArray<NewOutboxRow | LoggedMessage> = []): void {
    this.lsn += 0x100n;
    this.log.push({
      endLsn: this.lsn,
      commitTimeMs: this.clock.now(),
      messages: messages.map((m) => ('messageId' in m ? { row: m } : m)),
    });
    this.stream();
  }

  /** A keepalive: the server has sent everything up to the log's end. */
  keepalive(): void {
    if (!this.connection.paused && this.sent === this.log.length) {
      this.session.onFrame({ kind: 'keepalive', walEnd: this.lsn + 0x10n, replyRequested: false });
    }
  }

  /** The process dies: the session is dropped unfinished; a new one reads from the slot's confirmed position. */
  crash(): void {
    this.connection.closed = true;
    const position = this.connection.position;
    this.start(position, new Set());
  }

  /** Messages of ours committed, by id, in log order. */
  committedRows(): NewOutboxRow[] {
    return this.log.flatMap((t) => t.messages.flatMap((m) => ('row' in m ? [m.row] : [])));
  }

  private start(from: bigint, parkedKeys: Set<string>): void {
    const clock = turnless(this.clock);
    const logger = new Logger('model');
    logger.error = (message: unknown) => void this.errors.push(String(message));
    logger.warn = () => undefined;
    logger.log = () => undefined;
    this.session = new StreamSession(
      {
        transport: this.broker.transport(() => 'logical'),
        tracing: new MessageTracing(),
        metrics: new MessagingMetrics(),
        clock,
        relay: this.resolved.relay,
        names: this.names,
        parking: this.parking as never,
        wakePollingRelay: () => undefined,
        logger,
        report: (round) => {
          this.rounds.push(round);
          if (this.reportThrows) throw new Error('a round listener threw (model)');
        },
      },
      from,
      parkedKeys,
    );
    this.connection = new ModelConnection(() => this.stream());
    // The server skips every transaction whose commit ends at or before the confirmed position.
    this.sent = this.log.findIndex((t) => t.endLsn > from);
    if (this.sent < 0) this.sent = this.log.length;
    this.session.attach(this.connection);
    this.stream();
  }

  /** Sends the transactions not sent yet, frame by frame, while the connection reads. */
  private stream(): void {
    while (!this.connection.paused && !this.connection.closed && this.sent < this.log.length) {
      const t = this.log[this.sent++];
      for (const frame of this.frames(t)) this.session.onFrame(frame);
    }
  }

  private frames(t: LoggedTransaction): ServerFrame[] {
    const begin: ServerFrame = {
      kind: 'data',
      lsn: t.endLsn - 0xf0n,
      message: { tag: 'begin', finalLsn: t.endLsn - 0x8n, commitTimeMs: t.commitTimeMs, xid: 1 },
    };
    const all: ServerFrame[] = t.messages.map((m, i) => {
      const lsn = t.endLsn - 0xe0n + BigInt(i);
      const content = 'row' in m ? Buffer.from(encodeLogicalMessage(m.row)) : m.raw;
      const prefix = 'row' in m ? this.names.prefix : (m.prefix ?? this.names.prefix);
      const transactional = 'row' in m ? true : m.transactional !== false;
      return { kind: 'data', lsn, message: { tag: 'message', transactional, lsn, prefix, content } };
    });
    const commit: ServerFrame = {
      kind: 'data',
      lsn: t.endLsn - 0x8n,
      message: { tag: 'commit', commitLsn: t.endLsn - 0x8n, endLsn: t.endLsn, commitTimeMs: t.commitTimeMs },
    };
    // A non-transactional message is decoded at once, outside any transaction.
    const outside = all.filter(
      (f) => f.kind === 'data' && f.message.tag === 'message' && !f.message.transactional,
    );
    const inside = all.filter((f) => !outside.includes(f));
    return [...outside, begin, ...inside, commit];
  }
}
