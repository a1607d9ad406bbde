import { Logger } from '@nestjs/common';
import { CancelTimer, Clock } from '../../common/clock';
import { MessageTracing } from '../../observability/message-tracing';
import { MessagingMetrics } from '../../observability/messaging-metrics';
import { ResolvedMessagingOptions } from '../../options/resolve-messaging-options';
import { computeRetryDelay } from '../../retry/backoff';
import { MessageTransport } from '../../transports/message-transport.interface';
import { PublishOutcome } from '../../transports/publish-outcome';
import { NewOutboxRow } from '../outbox-row';
import { publishRows } from '../relay-batch';
import { decodeLogicalMessage } from './logical-message-codec';
import { LogicalNames } from './logical-names';
import { formatLsn, Lsn } from './lsn';
import { ParkedMessages } from './parked-messages';
import { ReplicationConnection } from './replication-connection';
import { ServerFrame } from './replication-protocol';
import { StreamEntry, StreamQueue } from './stream-queue';

/** Batches on the wire at once: the next one goes while the broker confirms the previous. */
const MAX_IN_FLIGHT_BATCHES = 2;
/** Reading the slot pauses once this many batches of messages wait (a broker outage): PostgreSQL keeps them. */
const BUFFERED_BATCHES = 10;
/** Refusals (the broker answering, and saying no) after which a message is parked. */
const PARK_AFTER_REFUSALS = 5;
/** How long a publish may wait for the broker's confirmations before its outcome is AMBIGUOUS. */
const PUBLISH_TIMEOUT_MS = 15_000;
/** A status update goes at least this often, also while reading is paused (the server's wal_sender_timeout). */
const STATUS_INTERVAL_MS = 10_000;
/** While keys have parked messages, the outbox is asked this often whether the polling relay sent them. */
const PARKED_KEYS_REFRESH_MS = 1_000;

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
  readonly transport: MessageTransport;
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
}

/**
 * One replication connection's reading of the slot: what it read (a `StreamQueue`), what is on the wire, what
 * was confirmed to PostgreSQL. It hands out batches that keep each key's order, publishes them, parks messages
 * the broker keeps refusing (with every later message of their keys) and confirms positions as the broker
 * confirms. Frames come in through `onFrame`, in the server's order.
 */
export class StreamSession {
  private readonly queue: StreamQueue;
  private connection?: ReplicationConnection;
  /** A transaction begun and not yet committed in the stream. */
  private open?: { commitTimeMs: number; rows: NewOutboxRow[] };
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

  constructor(
    private readonly deps: StreamSessionDeps,
    /** The slot's confirmed position when the stream starts. */
    start: Lsn,
    /** Keys (`keyOf`) with pending rows in the outbox: their messages are parked behind them. */
    private parkedKeys: Set<string>,
  ) {
    this.queue = new StreamQueue(start);
    this.sentLsn = start;
    this.parkedKeysRefreshedAt = deps.clock.now();
  }

  /** Starts publishing what the connection streams; status updates go on an interval from now. */
  attach(connection: ReplicationConnection): void {
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

  /** Seconds since the oldest commit read and not confirmed (0: none), and the messages not confirmed. */
  lag(): { lagSeconds: number; unconfirmed: number } {
    const oldest = this.queue.oldestPendingCommitMs();
    return {
      lagSeconds: oldest === undefined ? 0 : Math.max(0, this.deps.clock.now() - oldest) / 1000,
      unconfirmed: this.queue.size,
    };
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
      if (!this.open || !message.transactional || message.prefix !== this.deps.names.prefix) return;
      const decoded = decodeLogicalMessage(message.content);
      if (decoded.ok) this.open.rows.push(decoded.row);
      else
        this.deps.logger.error(
          `Skipped a message at ${formatLsn(message.lsn)} with this outbox's prefix that is not one ` +
            `OutboxService wrote (${decoded.reason}).`,
        );
    } else if (message.tag === 'commit' && this.open) {
      const { commitTimeMs, rows } = this.open;
      this.open = undefined;
      this.queue.add({ endLsn: message.endLsn, commitTimeMs, rows });
      if (rows.length > 0) this.kick();
      else this.confirm();
      if (!this.paused && this.queue.size >= this.bufferLimit) {
        this.paused = true;
        this.connection?.pause();
      }
    }
  }

  private get bufferLimit(): number {
    return this.deps.relay.batchSize * BUFFERED_BATCHES;
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
      if (this.parkedKeys.size > 0 && now - this.parkedKeysRefreshedAt >= PARKED_KEYS_REFRESH_MS) {
        await this.refreshParkedKeys();
      }
      while (this.work.size < MAX_IN_FLIGHT_BATCHES && !this.stopping) {
        const batch = this.queue.take(now, this.deps.relay.batchSize);
        if (batch.length === 0) break;
        const behind = batch.filter((entry) => this.parkedKeys.has(entry.key));
        const publish = behind.length === 0 ? batch : batch.filter((e) => !this.parkedKeys.has(e.key));
        if (behind.length > 0) {
          this.queue.divert(behind);
          this.track(this.park(behind, () => 'behind a parked message of its key'));
        }
        if (publish.length > 0) this.track(this.publish(publish));
      }
      const retry = this.queue.nextRetryAt(now);
      if (retry !== undefined) this.retryAt(retry);
      if (this.paused && this.queue.size < this.bufferLimit / 2) {
        this.paused = false;
        this.connection?.resume();
      }
    }
  }

  private track(work: Promise<void>): void {
    const tracked = work.finally(() => {
      this.work.delete(tracked);
      this.kick();
    });
    this.work.add(tracked);
  }

  private async publish(batch: readonly StreamEntry[]): Promise<void> {
    const { metrics, transport, tracing, clock } = this.deps;
    const stopTimer = metrics.publishDuration.startTimer();
    const rows = batch.map((entry) => entry.row);
    const outcomes = await publishRows(transport, tracing, rows, PUBLISH_TIMEOUT_MS);
    stopTimer();
    const now = clock.now();
    const anyConfirmed = outcomes.some((o) => o.status === 'CONFIRMED');
    // Nothing confirmed: the broker is down, unless it answers and refused (then the messages are at fault).
    const brokerUp =
      anyConfirmed ||
      (outcomes.some((o) => o.status === 'REJECTED') &&
        (await transport.checkHealth().then((h) => h.connected)));
    this.failures = brokerUp ? 0 : this.failures + 1;
    const { toPark, confirmed } = this.queue.settle(batch, outcomes, {
      now,
      retryInMs: (attempts) => this.retryDelay(attempts),
      countRefusals: brokerUp,
      parkAfterRefusals: PARK_AFTER_REFUSALS,
    });
    this.record(batch, outcomes, now);
    if (!brokerUp) this.pauseFor(now, this.retryDelay(1), outcomes);
    if (toPark.length > 0) {
      const reasons = new Map(batch.map((entry, i) => [entry, outcomes[i]]));
      await this.park(toPark, (entry) => describeOutcome(reasons.get(entry)));
    }
    this.confirm();
    this.report({ published: batch.length, confirmed, parked: 0 }); // parks report themselves
  }

  /** Parks messages in the outbox table (in order), then counts them done. */
  private async park(entries: readonly StreamEntry[], reason: (entry: StreamEntry) => string): Promise<void> {
    try {
      await this.deps.parking.park(entries.map((entry) => ({ row: entry.row, error: reason(entry) })));
    } catch (error) {
      this.queue.parkingFailed(entries, this.deps.clock.now() + this.retryDelay());
      this.deps.logger.warn(
        `Parking ${entries.length} refused messages in the outbox table failed; trying again: ${describe(error)}`,
      );
      return;
    }
    this.queue.parked(entries);
    for (const entry of entries) {
      this.parkedKeys.add(entry.key);
      this.parkedSinceRefresh.add(entry.key);
      this.deps.metrics.parked.inc({ destination: entry.row.destination });
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

  private record(batch: readonly StreamEntry[], outcomes: readonly PublishOutcome[], now: number): void {
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
    const { retryInitialDelayMs, retryMaxDelayMs } = this.deps.relay;
    const backoff = { initialDelayMs: retryInitialDelayMs, multiplier: 2, maxDelayMs: retryMaxDelayMs };
    return computeRetryDelay(backoff, Math.max(1, attempts, this.failures), () => this.deps.clock.random());
  }

  private report(result: Omit<LogicalRoundResult, 'confirmedLsn'>): void {
    this.deps.report({ ...result, confirmedLsn: formatLsn(this.sentLsn) });
  }
}

function describeOutcome(outcome: PublishOutcome | undefined): string {
  if (!outcome || outcome.status === 'CONFIRMED') return 'confirmed';
  return `${outcome.status}: ${describe(outcome.error)}`;
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
