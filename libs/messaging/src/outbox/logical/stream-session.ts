import { Logger } from '@nestjs/common';
import { CancelTimer, Clock } from '../../common/clock';
import { MessageTracing } from '../../observability/message-tracing';
import { MessagingMetrics } from '../../observability/messaging-metrics';
import { ResolvedMessagingOptions } from '../../options/resolve-messaging-options';
import { MessageTransport } from '../../transports/message-transport.interface';
import { PublishOutcome } from '../../transports/publish-outcome';
import { PublishQueue, QueuedMessage, SourceRow } from '../publishing/publish-queue';
import { publishRows } from '../publishing/publish-rows';
import {
  MAX_IN_FLIGHT_BATCHES,
  ParkRule,
  PUBLISH_TIMEOUT_MS,
  publishRetryDelay,
  retainedLimit,
} from '../publishing/publishing-rules';
import { decodeLogicalMessage } from './logical-message-codec';
import { LogicalNames } from './logical-names';
import { formatLsn, Lsn } from './lsn';
import { derivedMessageId, ParkedMessages } from './parked-messages';
import { ReplicationConnection } from './replication-connection';
import { ServerFrame } from './replication-protocol';

/** A status update goes at least this often, also while reading is paused (the server's wal_sender_timeout). */
const STATUS_INTERVAL_MS = 10_000;
/**
 * The outbox is asked this often which keys have pending rows (parked ones, or a poll-mode writer's during a
 * rolling change of mode): the stream's messages of those keys are parked behind them.
 */
export const PARKED_KEYS_REFRESH_MS = 1_000;
/** The destination and type of content under our prefix that did not decode: parked held, never published. */
export const UNDECODABLE = '(undecodable)';

/** What one round of the logical relay did (tests, benchmarks). */
export interface LogicalRoundResult {
  readonly published: number;
  readonly confirmed: number;
  readonly parked: number;
  /** The position confirmed to PostgreSQL after the round. */
  readonly confirmedLsn: string;
}

/** What a session works with: the relay's collaborators. */
export interface StreamSessionDeps {
  /** The part of a transport a session uses. */
  readonly transport: Pick<MessageTransport, 'kind' | 'publish' | 'checkHealth'>;
  readonly tracing: MessageTracing;
  readonly metrics: MessagingMetrics;
  readonly clock: Clock;
  readonly relay: ResolvedMessagingOptions['relay'];
  readonly names: LogicalNames;
  readonly parking: ParkedMessages;
  /** Wakes the local polling relay (parked rows are its). */
  readonly wakePollingRelay: () => void;
  readonly logger: Logger;
  readonly report: (round: LogicalRoundResult) => void;
  /** When to park a message that keeps failing. Default: the publishing rules' `DEFAULT_PARK_RULE`. */
  readonly park?: ParkRule;
}

/** What the session needs of its replication connection. */
export type SessionConnection = Pick<ReplicationConnection, 'confirm' | 'pause' | 'resume' | 'close'>;

/**
 * One replication connection's reading of the slot: what it read (a `StreamQueue`), what is on the wire, what
 * was confirmed to PostgreSQL. It hands out batches that keep each key's order, publishes them, parks messages
 * the broker keeps refusing (with every later message of their keys) and confirms positions as the broker
 * confirms. Frames come in through `onFrame`, in the server's order.
 */
export class StreamSession {
  private readonly queue: PublishQueue;
  private connection?: SessionConnection;
  /** A transaction begun and not yet committed in the stream. */
  private open?: { commitTimeMs: number; rows: SourceRow[] };
  private paused = false;
  private stopping = false;
  private readonly work = new Set<Promise<void>>();
  /** The position last confirmed to PostgreSQL. */
  private sentLsn: Lsn;
  private wakeRequested = false;
  private pumping?: Promise<void>;
  private retryTimer?: CancelTimer;
  private statusTimer?: CancelTimer;
  /** Consecutive publishes with nothing confirmed while the broker did not answer: the backoff. */
  private failures = 0;
  private resumeAt = 0;
  private parkedSinceRefresh = new Set<string>();
  private parkedKeysRefreshedAt: number;
  private readonly retainedLimit: number;

  constructor(
    private readonly deps: StreamSessionDeps,
    /** The slot's confirmed position when the stream starts. */
    start: Lsn,
    /** Keys (`keyOf`) with pending rows in the outbox: their messages are parked behind them. */
    private parkedKeys: Set<string>,
  ) {
    this.queue = new PublishQueue(start);
    this.sentLsn = start;
    this.parkedKeysRefreshedAt = deps.clock.now();
    this.retainedLimit = retainedLimit(deps.relay);
  }

  /**
   * The server streams from `lsn` (the slot's confirmed position once this session holds it): the session's
   * position never goes below it, so that no status update takes the slot back.
   */
  startAt(lsn: Lsn): void {
    this.queue.startAt(lsn);
    if (lsn > this.sentLsn) this.sentLsn = lsn;
  }

  /** Starts publishing what the connection streams; status updates go on an interval from now. */
  attach(connection: SessionConnection): void {
    this.connection = connection;
    this.statusTimer = this.deps.clock.setInterval(() => this.confirm(true), STATUS_INTERVAL_MS);
    this.kick();
  }

  /**
   * Stops handing out batches, waits for those on the wire and confirms what they confirmed; with `closing`,
   * then closes the connection (a shutdown; after the stream ended on its own there is nothing to close).
   */
  async finish(closing: boolean): Promise<void> {
    this.stopping = true;
    this.retryTimer?.();
    this.statusTimer?.();
    await Promise.allSettled([...this.work]);
    if (closing) {
      this.confirm();
      await this.connection?.close();
    }
  }

  /**
   * Seconds since the oldest commit read and not confirmed (0: none), the messages not confirmed, and what is
   * held in memory (`retained`: what the pause counts).
   */
  lag(): { lagSeconds: number; unconfirmed: number; retained: number } {
    const oldest = this.queue.oldestPendingCommitMs();
    return {
      lagSeconds: oldest === undefined ? 0 : Math.max(0, this.deps.clock.now() - oldest) / 1000,
      unconfirmed: this.queue.size,
      retained: this.queue.retained,
    };
  }

  /** Whether reading is paused (what is held in memory reached the limit). */
  get readingPaused(): boolean {
    return this.paused;
  }

  /** One frame of the stream, in the server's order. */
  onFrame(frame: ServerFrame): void {
    if (frame.kind === 'keepalive') {
      // Everything before walEnd was sent, and seen above: with nothing pending, the slot may move on.
      if (!this.open) this.queue.idleUpTo(frame.walEnd);
      this.confirm(frame.replyRequested);
      return;
    }
    if (frame.kind !== 'data') return;
    const message = frame.message;
    if (message.tag === 'begin') {
      this.open = { commitTimeMs: message.commitTimeMs, rows: [] };
    } else if (message.tag === 'message') {
      if (message.prefix !== this.deps.names.prefix) return;
      if (!this.open || !message.transactional) {
        // OutboxService writes transactional messages only: this one was written by hand, and has no commit.
        this.deps.logger.error(
          `Skipped a non-transactional message at ${formatLsn(message.lsn)} with this outbox's prefix: ` +
            'OutboxService never writes one, and the slot gives it no transaction to confirm.',
        );
        return;
      }
      const decoded = decodeLogicalMessage(message.content);
      if (decoded.ok) this.open.rows.push(decoded.row);
      else {
        // Parked, held, with its raw content: never skipped and confirmed past.
        this.open.rows.push(undecodable(message.lsn, message.content, decoded.reason));
        this.deps.logger.error(
          `A message at ${formatLsn(message.lsn)} with this outbox's prefix does not decode ` +
            `(${decoded.reason}): it is parked held in the outbox table (destination '${UNDECODABLE}'), never published.`,
        );
      }
    } else if (message.tag === 'commit' && this.open) {
      const { commitTimeMs, rows } = this.open;
      this.open = undefined;
      this.queue.add({ position: message.endLsn, committedAtMs: commitTimeMs, rows });
      if (rows.length > 0) this.kick();
      else this.confirm();
      this.pauseOrResume();
    }
  }

  /** Stops reading while what is held in memory is at the limit; reads again below half of it. */
  private pauseOrResume(): void {
    const retained = this.queue.retained;
    if (!this.paused && retained >= this.retainedLimit) {
      this.paused = true;
      this.connection?.pause();
    } else if (this.paused && retained < this.retainedLimit / 2) {
      this.paused = false;
      this.connection?.resume();
    }
  }

  /** Asks for a round now; calls while one runs are folded into one more. */
  private kick(): void {
    if (!this.connection || this.stopping) return;
    this.wakeRequested = true;
    this.pumping ??= this.pump().finally(() => {
      this.pumping = undefined;
      if (this.wakeRequested) this.kick();
    });
  }

  /** Hands out batches (publish, or park behind parked messages) while there is room on the wire. */
  private async pump(): Promise<void> {
    while (this.wakeRequested && !this.stopping) {
      this.wakeRequested = false;
      const now = this.deps.clock.now();
      if (now < this.resumeAt) {
        this.retryAt(this.resumeAt);
        return;
      }
      // Whatever is parked: a poll-mode writer (a rolling change of mode) may have added rows of any key.
      if (now - this.parkedKeysRefreshedAt >= PARKED_KEYS_REFRESH_MS) await this.refreshParkedKeys();
      while (this.work.size < MAX_IN_FLIGHT_BATCHES && !this.stopping) {
        const { publish, park } = this.queue.take(now, this.deps.relay.batchSize, (key) =>
          this.parkedKeys.has(key),
        );
        if (publish.length === 0 && park.length === 0) break;
        if (park.length > 0) this.track(this.park(park));
        if (publish.length > 0) this.track(this.publish(publish));
      }
      const retry = this.queue.nextRetryAt(now);
      if (retry !== undefined) this.retryAt(retry);
      this.pauseOrResume();
    }
  }

  /** Keeps `work` until it ends; what escapes it (a bug, a round listener that threw) is logged, not thrown. */
  private track(work: Promise<void>): void {
    const tracked: Promise<void> = work
      .catch((error: unknown) =>
        this.deps.logger.error(`A logical relay batch failed: ${describe(error)}`, (error as Error)?.stack),
      )
      .finally(() => {
        this.work.delete(tracked);
        this.kick();
      });
    this.work.add(tracked);
  }

  private async publish(batch: readonly QueuedMessage[]): Promise<void> {
    const { metrics, transport, tracing, clock } = this.deps;
    const stopTimer = metrics.publishDuration.startTimer();
    const rows = batch.map((entry) => entry.row);
    const outcomes = await publishRows(transport, tracing, rows, PUBLISH_TIMEOUT_MS, clock);
    stopTimer();
    const now = clock.now();
    const anyConfirmed = outcomes.some((o) => o.status === 'CONFIRMED');
    // Nothing confirmed: the broker is down, unless it answers (then the messages are at fault).
    const brokerUp =
      anyConfirmed ||
      (await transport.checkHealth().then(
        (h) => h.connected,
        () => false,
      ));
    this.failures = brokerUp ? 0 : this.failures + 1;
    const { toPark, done } = this.queue.settle(batch, outcomes, {
      now,
      brokerUp,
      retryInMs: (attempts) => this.retryDelay(attempts),
      park: this.deps.park,
    });
    this.record(batch, outcomes, now);
    if (!brokerUp) this.pauseFor(now, this.retryDelay(1), outcomes);
    if (toPark.length > 0) await this.park(toPark);
    this.confirm();
    this.report({ published: batch.length, confirmed: done.length, parked: 0 }); // parks report themselves
  }

  /** Parks messages in the outbox table (in order), then counts them done. */
  private async park(entries: readonly QueuedMessage[]): Promise<void> {
    const reason = (entry: QueuedMessage) => entry.parkReason ?? 'parked';
    let conflicts: Awaited<ReturnType<ParkedMessages['park']>>['idConflicts'];
    try {
      ({ idConflicts: conflicts } = await this.deps.parking.park(
        entries.map((entry) => ({
          row: entry.row,
          error: reason(entry),
          hold: entry.row.destination === UNDECODABLE,
        })),
      ));
    } catch (error) {
      this.queue.parkingFailed(entries, this.deps.clock.now() + this.retryDelay());
      this.deps.logger.warn(
        `Parking ${entries.length} messages in the outbox table failed; trying again: ${describe(error)}`,
      );
      return;
    }
    this.queue.parked(entries);
    for (const entry of entries) {
      this.parkedKeys.add(entry.key);
      this.parkedSinceRefresh.add(entry.key);
      this.deps.metrics.parked.inc({ destination: entry.row.destination });
    }
    for (const { messageId, parkedAs } of conflicts) {
      this.deps.logger.error(
        `A message with the id ${messageId} was parked already with another payload (an id reused): this one ` +
          `is parked held as ${parkedAs}, never published; an operator decides what becomes of it.`,
      );
    }
    const first = entries[0];
    this.deps.logger.error(
      `Parked ${entries.length} message(s) in the outbox table for the polling relay (first: ` +
        `${first.row.messageId} to ${first.row.destination}: ${reason(first)}). They keep their key's order ` +
        'there and are retried; later messages of their keys follow them there until they are sent.',
    );
    this.deps.wakePollingRelay();
    this.confirm();
    this.report({ published: 0, confirmed: 0, parked: entries.length });
  }

  /**
   * Keys whose parked rows the polling relay has sent go back to the stream. A key parked while the query
   * runs stays parked (its row may have been inserted after the query's snapshot).
   */
  private async refreshParkedKeys(): Promise<void> {
    this.parkedSinceRefresh = new Set();
    this.parkedKeysRefreshedAt = this.deps.clock.now();
    try {
      const pending = await this.deps.parking.pendingKeys();
      this.parkedSinceRefresh.forEach((key) => pending.add(key));
      this.parkedKeys = pending;
    } catch {
      // Keep the keys parked; the next round asks again.
    }
  }

  /** Tells PostgreSQL what is done with, when that moved on (or when asked, or on the status interval). */
  private confirm(always = false): void {
    const lsn = this.queue.confirmable();
    if (!always && lsn <= this.sentLsn) return;
    this.sentLsn = lsn;
    this.connection?.confirm(lsn, this.deps.clock.now());
  }

  private record(batch: readonly QueuedMessage[], outcomes: readonly PublishOutcome[], now: number): void {
    const { metrics } = this.deps;
    batch.forEach((entry, i) => {
      const outcome = outcomes[i];
      const destination = entry.row.destination;
      if (outcome?.status === 'CONFIRMED') {
        metrics.published.inc({ destination });
        if (entry.attempts === 0)
          metrics.commitToPublish.observe((now - entry.row.createdAt.getTime()) / 1000);
      } else {
        metrics.publishFailures.inc({ destination, outcome: outcome?.status ?? 'AMBIGUOUS' });
      }
    });
  }

  /** Nothing confirmed and the broker does not answer: every publish waits for the backoff. */
  private pauseFor(now: number, delayMs: number, outcomes: readonly PublishOutcome[]): void {
    this.resumeAt = now + delayMs;
    this.retryAt(this.resumeAt);
    this.deps.metrics.brokerErrors.inc({ transport: this.deps.transport.kind, operation: 'publish' });
    this.deps.logger.warn(
      `${outcomes.length} message(s) not confirmed (${describeOutcome(outcomes[0])}); retrying in ${delayMs} ms.`,
    );
  }

  private retryAt(at: number): void {
    const { clock } = this.deps;
    this.retryTimer?.();
    this.retryTimer = clock.setTimeout(() => this.kick(), Math.max(0, at - clock.now()) + 1);
  }

  /**
   * The backoff before trying again: exponential in the message's own attempts or in the broker's consecutive
   * failures (whichever is more), with full jitter.
   */
  private retryDelay(attempts = 1): number {
    return publishRetryDelay(this.deps.relay, Math.max(attempts, this.failures), () =>
      this.deps.clock.random(),
    );
  }

  private report(result: Omit<LogicalRoundResult, 'confirmedLsn'>): void {
    this.deps.report({ ...result, confirmedLsn: formatLsn(this.sentLsn) });
  }
}

/**
 * Content under our prefix that did not decode, as a row to park held: its raw text as a JSON string, an id
 * derived from its position and content (the same when the stream is read again), a key of its own.
 */
function undecodable(lsn: Lsn, content: Buffer, reason: string): SourceRow {
  const at = formatLsn(lsn);
  return {
    messageId: derivedMessageId(`undecodable ${at}`, content),
    destination: UNDECODABLE,
    type: UNDECODABLE,
    key: at,
    headers: {},
    payloadJson: JSON.stringify(content.toString('utf8')),
    occurredAt: new Date(0),
    parkReason: `UNDECODABLE: ${reason}`.slice(0, 500),
  };
}

function describeOutcome(outcome: PublishOutcome | undefined): string {
  if (!outcome || outcome.status === 'CONFIRMED') return 'confirmed';
  return `${outcome.status}: ${describe(outcome.error)}`;
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
