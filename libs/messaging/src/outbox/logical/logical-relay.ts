import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleInit,
} from '@nestjs/common';
import type { ClientConfig, Pool } from 'pg';
import { DataSource } from 'typeorm';
import { CancelTimer, Clock } from '../../common/clock';
import { postgresTables } from '../../database/postgres/postgres-tables';
import { InvalidMessagingOptionsError } from '../../errors/invalid-messaging-options.error';
import { ReplicationSlotInvalidatedError } from '../../errors/replication-slot-invalidated.error';
import { ReplicationSlotMissingError } from '../../errors/replication-slot-missing.error';
import {
  MESSAGING_CLOCK,
  MESSAGING_DATA_SOURCE,
  MESSAGING_LOGICAL_NAMES,
  MESSAGING_RESOLVED_OPTIONS,
  MESSAGING_TRANSPORT,
} from '../../messaging.constants';
import { MessageTracing } from '../../observability/message-tracing';
import { MessagingMetrics } from '../../observability/messaging-metrics';
import { ResolvedMessagingOptions } from '../../options/resolve-messaging-options';
import { computeRetryDelay, RECONNECT_BACKOFF } from '../../retry/backoff';
import { MessageTransport } from '../../transports/message-transport.interface';
import { PublishOutcome } from '../../transports/publish-outcome';
import { NewOutboxRow } from '../outbox-row';
import { publishRows } from '../relay-batch';
import { RelayWakeup } from '../relay-wakeup';
import { decodeLogicalMessage } from './logical-message-codec';
import { LogicalNames } from './logical-names';
import { checkLogicalRelayServer } from './logical-relay-checks';
import { formatLsn, Lsn } from './lsn';
import { ParkedMessages } from './parked-messages';
import { ReplicationConnection } from './replication-connection';
import { ServerFrame } from './replication-protocol';
import { readReplicationSlot, ReplicationSlotState, SqlRunner } from './replication-slot';
import { classifyStreamFailure, StreamFailure } from './stream-failure';
import { StreamEntry, StreamQueue } from './stream-queue';

/** Batches on the wire at once: the next one goes while the broker confirms the previous. */
const MAX_IN_FLIGHT_BATCHES = 2;
/** Reading the slot pauses once this many batches of messages wait (a broker outage): PostgreSQL keeps them. */
const BUFFERED_BATCHES = 10;
/** Refusals (the broker answering, and saying no) after which a message is parked. */
const PARK_AFTER_REFUSALS = 5;
/** How long a publish may wait for the broker's confirmations before its outcome is AMBIGUOUS. */
const PUBLISH_TIMEOUT_MS = 15_000;
/** A stand-by asks for the slot this often (± 20%): it takes over within about this after the reader dies. */
const STANDBY_RETRY_MS = 1_000;
/** An instance that cannot read for a reason an operator must fix looks again this often. */
const PROBLEM_RETRY_MS = 5_000;
/** The same problem is logged again after this long. */
const PROBLEM_LOG_INTERVAL_MS = 60_000;
/** A status update goes at least this often, also while reading is paused (the server's wal_sender_timeout). */
const STATUS_INTERVAL_MS = 10_000;
/** While keys have parked messages, the outbox is asked this often whether the polling relay sent them. */
const PARKED_KEYS_REFRESH_MS = 1_000;

/** What the logical relay is doing. */
export type LogicalRelayState =
  /** Polling mode, or the relay is disabled in this process. */
  | 'off'
  | 'starting'
  /** Reading the slot. */
  | 'reading'
  /** Another instance reads the slot; this one takes over when it stops. */
  | 'standby'
  /** Cannot read: see `problem`. */
  | 'failing';

/** The logical relay's state, without I/O (health). */
export interface LogicalRelayStatus {
  readonly state: LogicalRelayState;
  readonly slot: string;
  /** While `failing`: what is wrong, in a fixed phrase (the details are in the log). */
  readonly problem?: string;
  /** While reading: seconds since the oldest commit read and not yet confirmed by the broker (0: none). */
  readonly lagSeconds?: number;
  /** While reading: messages read and not yet confirmed by the broker (or parked). */
  readonly unconfirmed?: number;
}

/** What one round of the logical relay did (tests, benchmarks). */
export interface LogicalRoundResult {
  readonly published: number;
  readonly confirmed: number;
  readonly parked: number;
  /** The position confirmed to PostgreSQL after the round. */
  readonly confirmedLsn: string;
}

/** One replication connection's reading: the queue of what it read, and what is on the wire. */
interface Session {
  readonly queue: StreamQueue;
  connection?: ReplicationConnection;
  /** A transaction begun and not yet committed in the stream. */
  open?: { commitTimeMs: number; rows: NewOutboxRow[] };
  paused: boolean;
  closed: boolean;
  readonly work: Set<Promise<void>>;
  /** The position last confirmed to PostgreSQL. */
  sentLsn: Lsn;
}

/**
 * `relay.mode: 'logical'`: publishes the outbox's messages from PostgreSQL's log. It reads the slot through a
 * replication connection (pgoutput, messages only), publishes each committed transaction's messages in commit
 * order, keeping each key's order, and confirms a position to PostgreSQL only once the broker confirmed every
 * message before it, so a crash re-reads what was not confirmed (duplicates the inbox absorbs) and loses
 * nothing. A message the broker keeps refusing is parked in the outbox table for the polling relay (with every
 * later message of its key), so the slot moves on. One instance reads; the others stand by and take over.
 */
@Injectable()
export class LogicalRelay implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(LogicalRelay.name);
  private readonly sql: SqlRunner;
  private readonly parking: ParkedMessages;
  private state: LogicalRelayState = 'off';
  private problem?: string;
  private lastProblemLog?: { text: string; at: number };
  private loop?: Promise<void>;
  private stopping = false;
  private session?: Session;
  private wakeRequested = false;
  private pumping?: Promise<void>;
  private retryTimer?: CancelTimer;
  private sleeping?: { cancel: CancelTimer; resolve: () => void };
  /** Consecutive failures to connect, or batches with nothing confirmed: drive the backoffs. */
  private failures = 0;
  private resumeAt = 0;
  /** Keys (`keyOf`) with pending rows in the outbox: their stream messages are parked behind them. */
  private parkedKeys = new Set<string>();
  private parkedSinceRefresh = new Set<string>();
  private parkedKeysRefreshedAt = 0;
  private readonly roundListeners = new Set<(result: LogicalRoundResult) => void>();

  /** @internal Created by Nest. */
  constructor(
    @Inject(MESSAGING_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
    @Inject(MESSAGING_LOGICAL_NAMES) private readonly names: LogicalNames,
    @Inject(MESSAGING_CLOCK) private readonly clock: Clock,
    private readonly wakeup: RelayWakeup,
    private readonly metrics: MessagingMetrics,
    private readonly tracing: MessageTracing,
  ) {
    this.sql = <R extends object>(text: string, params?: unknown[]) => dataSource.query<R[]>(text, params);
    this.parking = new ParkedMessages(this.sql, postgresTables(dataSource).outbox);
  }

  /** Logical mode: refuses to start on a server, or with a slot, the mode cannot work with. */
  async onModuleInit(): Promise<void> {
    if (this.options.relay.mode !== 'logical') return;
    const type = String(this.dataSource.options.type);
    if (type !== 'postgres') {
      throw new InvalidMessagingOptionsError([
        {
          path: 'relay.mode',
          message:
            `'logical' reads PostgreSQL's log; this DataSource is '${type}'. MySQL and MariaDB keep the ` +
            "polling relay: leave relay.mode unset (or 'poll').",
        },
      ]);
    }
    await checkLogicalRelayServer(this.sql, this.names, this.options.relay.enabled);
  }

  onApplicationBootstrap(): void {
    if (this.options.relay.mode !== 'logical' || !this.options.relay.enabled) return;
    this.state = 'starting';
    this.loop = this.run();
  }

  /** Stops reading, lets the batches on the wire finish, confirms what they confirmed, and closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.retryTimer?.();
    this.sleeping?.cancel();
    this.sleeping?.resolve();
    const session = this.session;
    if (session) {
      await Promise.allSettled([...session.work]);
      this.confirm(session);
      await session.connection?.close();
    }
    await this.loop;
    this.state = 'off';
  }

  /** The state right now, without I/O. */
  status(): LogicalRelayStatus {
    const queue = this.session?.queue;
    const oldest = queue?.oldestPendingCommitMs();
    return {
      state: this.state,
      slot: this.names.slot,
      ...(this.problem ? { problem: this.problem } : {}),
      ...(this.state === 'reading' && queue
        ? {
            lagSeconds: oldest === undefined ? 0 : Math.max(0, this.clock.now() - oldest) / 1000,
            unconfirmed: queue.size,
          }
        : {}),
    };
  }

  /** The slot as PostgreSQL describes it now (health, metrics); undefined when it does not exist. */
  slotState(): Promise<ReplicationSlotState | undefined> {
    return readReplicationSlot(this.sql, this.names);
  }

  /** Observes every round (tests, benchmarks). Returns a function that stops observing. */
  onRound(listener: (result: LogicalRoundResult) => void): () => void {
    this.roundListeners.add(listener);
    return () => this.roundListeners.delete(listener);
  }

  /** Reads the slot until shutdown: reconnects after a failure, stands by while another instance reads. */
  private async run(): Promise<void> {
    while (!this.stopping) {
      let delay = 0;
      try {
        await this.read();
        this.failures = 0;
      } catch (error) {
        delay = await this.failed(error);
      }
      if (!this.stopping && delay > 0) await this.sleep(delay);
    }
  }

  /** One replication connection, from the slot's confirmed position until the stream ends. */
  private async read(): Promise<void> {
    const slot = await readReplicationSlot(this.sql, this.names);
    if (!slot) throw new ReplicationSlotMissingError(this.names.slot);
    if (slot.walStatus === 'lost') {
      const confirmed = slot.confirmedLsn === undefined ? undefined : formatLsn(slot.confirmedLsn);
      throw new ReplicationSlotInvalidatedError(this.names.slot, confirmed);
    }
    this.parkedKeys = await this.parking.pendingKeys();
    this.parkedSinceRefresh = new Set();
    this.parkedKeysRefreshedAt = this.clock.now();
    const start = slot.confirmedLsn ?? 0n;
    // The session exists before the stream starts: frames may follow the start at once, in the same read.
    const session: Session = {
      queue: new StreamQueue(start),
      paused: false,
      closed: false,
      work: new Set(),
      sentLsn: start,
    };
    session.connection = await ReplicationConnection.start(this.connectionConfig(), this.names, (frame) =>
      this.onFrame(session, frame),
    );
    if (this.stopping) {
      await session.connection.close();
      return;
    }
    if (this.state === 'standby') this.logger.log(`Took over the replication slot '${this.names.slot}'.`);
    else this.logger.log(`Reading the replication slot '${this.names.slot}' from ${formatLsn(start)}.`);
    this.session = session;
    this.state = 'reading';
    this.problem = undefined;
    this.lastProblemLog = undefined;
    this.failures = 0;
    const status = this.clock.setInterval(() => this.confirm(session, true), STATUS_INTERVAL_MS);
    this.kick();
    const error = await session.connection.ended;
    status();
    session.closed = true;
    await Promise.allSettled([...session.work]);
    this.session = undefined;
    if (!this.stopping) throw error ?? new Error('the replication stream ended');
  }

  /** One frame of the stream, in the server's order. */
  private onFrame(session: Session, frame: ServerFrame): void {
    if (frame.kind === 'keepalive') {
      // Everything before walEnd was sent, and seen above: with nothing pending, the slot may move on.
      if (!session.open) session.queue.idleUpTo(frame.walEnd);
      this.confirm(session, frame.replyRequested);
      return;
    }
    if (frame.kind !== 'data') return;
    const message = frame.message;
    if (message.tag === 'begin') {
      session.open = { commitTimeMs: message.commitTimeMs, rows: [] };
    } else if (message.tag === 'message') {
      if (!session.open || !message.transactional || message.prefix !== this.names.prefix) return;
      const decoded = decodeLogicalMessage(message.content);
      if (decoded.ok) session.open.rows.push(decoded.row);
      else
        this.logger.error(
          `Skipped a message at ${formatLsn(message.lsn)} with this outbox's prefix that is not one ` +
            `OutboxService wrote (${decoded.reason}).`,
        );
    } else if (message.tag === 'commit' && session.open) {
      session.queue.add({
        endLsn: message.endLsn,
        commitTimeMs: session.open.commitTimeMs,
        rows: session.open.rows,
      });
      const ours = session.open.rows.length > 0;
      session.open = undefined;
      if (ours) this.kick();
      else this.confirm(session);
      if (!session.paused && session.queue.size >= this.bufferLimit) {
        session.paused = true;
        session.connection?.pause();
      }
    }
  }

  private get bufferLimit(): number {
    return this.options.relay.batchSize * BUFFERED_BATCHES;
  }

  /** Asks for a round now; calls while one runs are folded into one more. */
  private kick(): void {
    const session = this.session;
    if (!session || session.closed || this.stopping) return;
    this.wakeRequested = true;
    this.pumping ??= this.pump(session).finally(() => {
      this.pumping = undefined;
      if (this.wakeRequested) this.kick();
    });
  }

  /** Hands out batches (publish, or park behind parked messages) while there is room on the wire. */
  private async pump(session: Session): Promise<void> {
    while (this.wakeRequested && !session.closed && !this.stopping) {
      this.wakeRequested = false;
      const now = this.clock.now();
      if (now < this.resumeAt) {
        this.retryAt(this.resumeAt);
        return;
      }
      if (this.parkedKeys.size > 0 && now - this.parkedKeysRefreshedAt >= PARKED_KEYS_REFRESH_MS) {
        await this.refreshParkedKeys();
      }
      while (session.work.size < MAX_IN_FLIGHT_BATCHES && !session.closed) {
        const batch = session.queue.take(now, this.options.relay.batchSize);
        if (batch.length === 0) break;
        const behind = batch.filter((entry) => this.parkedKeys.has(entry.key));
        const publish = behind.length === 0 ? batch : batch.filter((e) => !this.parkedKeys.has(e.key));
        if (behind.length > 0) {
          session.queue.divert(behind);
          this.track(
            session,
            this.park(session, behind, () => 'behind a parked message of its key'),
          );
        }
        if (publish.length > 0) this.track(session, this.publish(session, publish));
      }
      const retry = session.queue.nextRetryAt(now);
      if (retry !== undefined) this.retryAt(retry);
      if (session.paused && session.queue.size < this.bufferLimit / 2) {
        session.paused = false;
        session.connection?.resume();
      }
    }
  }

  private track(session: Session, work: Promise<void>): void {
    const tracked = work.finally(() => {
      session.work.delete(tracked);
      this.kick();
    });
    session.work.add(tracked);
  }

  private async publish(session: Session, batch: readonly StreamEntry[]): Promise<void> {
    const stopTimer = this.metrics.publishDuration.startTimer();
    const outcomes = await publishRows(
      this.transport,
      this.tracing,
      batch.map((entry) => entry.row),
      PUBLISH_TIMEOUT_MS,
    );
    stopTimer();
    const now = this.clock.now();
    const anyConfirmed = outcomes.some((o) => o.status === 'CONFIRMED');
    // Nothing confirmed: the broker is down, unless it answers and refused (then the messages are at fault).
    const brokerUp =
      anyConfirmed ||
      (outcomes.some((o) => o.status === 'REJECTED') &&
        (await this.transport.checkHealth().then((h) => h.connected)));
    this.failures = brokerUp ? 0 : this.failures + 1;
    const { toPark, confirmed } = session.queue.settle(batch, outcomes, {
      now,
      retryInMs: (attempts) => this.retryDelay(attempts),
      countRefusals: brokerUp,
      parkAfterRefusals: PARK_AFTER_REFUSALS,
    });
    this.record(batch, outcomes, now);
    if (!brokerUp) this.pauseFor(now, this.retryDelay(1), outcomes);
    if (toPark.length > 0) {
      const reasons = new Map(batch.map((entry, i) => [entry, outcomes[i]]));
      await this.park(session, toPark, (entry) => describeOutcome(reasons.get(entry)));
    }
    this.confirm(session);
    this.report({ published: batch.length, confirmed, parked: 0 }, session); // parks report themselves
  }

  /** Parks messages in the outbox table (in order), then counts them done. */
  private async park(
    session: Session,
    entries: readonly StreamEntry[],
    reason: (entry: StreamEntry) => string,
  ): Promise<void> {
    try {
      await this.parking.park(entries.map((entry) => ({ row: entry.row, error: reason(entry) })));
    } catch (error) {
      const retryAt = this.clock.now() + this.retryDelay();
      session.queue.parkingFailed(entries, retryAt);
      this.logger.warn(
        `Parking ${entries.length} refused messages in the outbox table failed; trying again: ${describe(error)}`,
      );
      return;
    }
    session.queue.parked(entries);
    for (const entry of entries) {
      this.parkedKeys.add(entry.key);
      this.parkedSinceRefresh.add(entry.key);
      this.metrics.parked.inc({ destination: entry.row.destination });
    }
    const first = entries[0];
    this.logger.error(
      `Parked ${entries.length} message(s) in the outbox table for the polling relay (first: ` +
        `${first.row.messageId} to ${first.row.destination}: ${reason(first)}). They keep their key's order ` +
        'there and are retried; later messages of their keys follow them there until they are sent.',
    );
    this.wakeup.fire();
    this.confirm(session);
    this.report({ published: 0, confirmed: 0, parked: entries.length }, session);
  }

  /** Keys whose parked rows the polling relay has sent go back to the stream. */
  private async refreshParkedKeys(): Promise<void> {
    this.parkedSinceRefresh = new Set();
    this.parkedKeysRefreshedAt = this.clock.now();
    try {
      const pending = await this.parking.pendingKeys();
      this.parkedSinceRefresh.forEach((key) => pending.add(key));
      this.parkedKeys = pending;
    } catch {
      // Keep the keys parked; the next round asks again.
    }
  }

  /** Tells PostgreSQL what is done with, when that moved on (or when asked, or on the status interval). */
  private confirm(session: Session, always = false): void {
    const lsn = session.queue.confirmable();
    if (!always && lsn <= session.sentLsn) return;
    session.sentLsn = lsn;
    session.connection?.confirm(lsn, this.clock.now());
  }

  private record(batch: readonly StreamEntry[], outcomes: readonly PublishOutcome[], now: number): void {
    batch.forEach((entry, i) => {
      const outcome = outcomes[i];
      const destination = entry.row.destination;
      if (outcome?.status === 'CONFIRMED') {
        this.metrics.published.inc({ destination });
        if (entry.attempts === 0) {
          this.metrics.commitToPublish.observe((now - entry.row.createdAt.getTime()) / 1000);
        }
      } else {
        this.metrics.publishFailures.inc({ destination, outcome: outcome?.status ?? 'AMBIGUOUS' });
      }
    });
  }

  /** Nothing confirmed: the broker is down (or refuses all); every publish waits for the backoff. */
  private pauseFor(now: number, delayMs: number, outcomes: readonly PublishOutcome[]): void {
    this.resumeAt = now + delayMs;
    this.retryAt(this.resumeAt);
    this.metrics.brokerErrors.inc({ transport: this.transport.kind, operation: 'publish' });
    this.logger.warn(
      `${outcomes.length} message(s) not confirmed (${describeOutcome(outcomes[0])}); retrying in ${delayMs} ms.`,
    );
  }

  private retryAt(at: number): void {
    this.retryTimer?.();
    this.retryTimer = this.clock.setTimeout(() => this.kick(), Math.max(0, at - this.clock.now()) + 1);
  }

  /**
   * The backoff before trying again: exponential in the message's own attempts or in the broker's consecutive
   * failures (whichever is more), with full jitter.
   */
  private retryDelay(attempts = 1): number {
    const { retryInitialDelayMs, retryMaxDelayMs } = this.options.relay;
    const backoff = { initialDelayMs: retryInitialDelayMs, multiplier: 2, maxDelayMs: retryMaxDelayMs };
    return computeRetryDelay(backoff, Math.max(1, attempts, this.failures), Math.random);
  }

  /** Classifies why reading stopped (or did not start), logs it, and returns how long to wait. */
  private async failed(error: unknown): Promise<number> {
    const failure = await classifyStreamFailure(error, async () => {
      const slot = await readReplicationSlot(this.sql, this.names);
      return slot?.walStatus === 'lost';
    });
    if (failure.kind === 'standby') {
      if (this.state !== 'standby') {
        this.logger.log(
          `Standing by: another instance reads the replication slot '${this.names.slot}'; this one takes ` +
            'over when it stops.',
        );
      }
      this.state = 'standby';
      this.problem = undefined;
      return Math.round(STANDBY_RETRY_MS * (0.8 + Math.random() * 0.4));
    }
    this.state = 'failing';
    this.problem = problemOf(failure);
    if (failure.kind === 'connection') {
      this.failures += 1;
      const delay = computeRetryDelay(RECONNECT_BACKOFF, this.failures, Math.random);
      this.logProblem(
        `Reading the replication slot '${this.names.slot}' failed (${describe(error)}); retrying in ${delay} ms.`,
        'warn',
      );
      return delay;
    }
    this.logProblem(describe(error), 'error');
    return PROBLEM_RETRY_MS;
  }

  /** Logs a problem the first time, and again every minute while it lasts. */
  private logProblem(text: string, level: 'warn' | 'error'): void {
    const now = this.clock.now();
    const last = this.lastProblemLog;
    if (last && last.text === text && now - last.at < PROBLEM_LOG_INTERVAL_MS) return;
    this.lastProblemLog = { text, at: now };
    if (level === 'error') this.logger.error(text);
    else this.logger.warn(text);
  }

  private sleep(delayMs: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = this.clock.setTimeout(() => {
        this.sleeping = undefined;
        resolve();
      }, delayMs);
      this.sleeping = { cancel, resolve };
    });
  }

  /** The DataSource's connection settings (pg's pool options), for a connection of the relay's own. */
  private connectionConfig(): ClientConfig {
    const pool = (this.dataSource.driver as unknown as { master: Pool & { options: ClientConfig } }).master;
    const config = { ...pool.options };
    return {
      ...config,
      application_name: `${this.options.serviceName} logical relay`,
      connectionTimeoutMillis: config.connectionTimeoutMillis || 10_000,
      keepAlive: true,
    };
  }

  private report(result: Omit<LogicalRoundResult, 'confirmedLsn'>, session: Session): void {
    const round = { ...result, confirmedLsn: formatLsn(session.sentLsn) };
    this.roundListeners.forEach((listener) => listener(round));
  }
}

function problemOf(failure: Exclude<StreamFailure, { kind: 'standby' }>): string {
  if (failure.kind === 'slot') {
    return failure.problem === 'missing'
      ? 'the replication slot does not exist'
      : 'the replication slot was invalidated';
  }
  return failure.kind === 'server'
    ? 'the server or role cannot serve the replication connection'
    : 'cannot connect to PostgreSQL for replication';
}

function describeOutcome(outcome: PublishOutcome | undefined): string {
  if (!outcome || outcome.status === 'CONFIRMED') return 'confirmed';
  return `${outcome.status}: ${describe(outcome.error)}`;
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
