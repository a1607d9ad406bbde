import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { encodeEnvelope } from '../envelope/envelope-codec';
import { MESSAGING_RESOLVED_OPTIONS, MESSAGING_TRANSPORT } from '../messaging.constants';
import { MessageTracing } from '../observability/message-tracing';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { computeRetryDelay } from '../retry/backoff';
import { MessageTransport } from '../transports/message-transport.interface';
import { PublishOutcome } from '../transports/publish-outcome';
import { ClaimedOutboxRow, FailedOutboxRow } from './outbox-row';
import { OutboxStore } from './outbox-store';
import { RelayWakeup } from './relay-wakeup';

/** What one relay round did. */
export interface RelayRoundResult {
  readonly claimed: number;
  readonly confirmed: number;
  readonly failed: number;
}

/**
 * Publishes outbox rows: claim a batch (lease, per-key order) → publish it → mark each confirmed row sent;
 * rows the broker did not confirm stay pending and are tried again after a backoff. It wakes on a local
 * commit, on NOTIFY from other instances (optional) and on a slow safety poll, so it is quick under load
 * and quiet when idle.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  /** Identifies this process's claims (`locked_by`). */
  readonly instanceId: string;
  private readonly pollTimer: string;
  private readonly retryTimer: string;
  private readonly heldTimer: string;
  private heldWakeAt = 0;
  /** An empty claim since the last busy one has looked for rows held by leases or backoff. */
  private idleChecked = false;
  private loop?: Promise<void>;
  private wakeRequested = false;
  private stopping = false;
  private started = false;
  private failures = 0;
  private resumeAt = 0;
  private retryDueAt = 0;
  private unlisten?: () => void;
  private readonly roundListeners = new Set<(result: RelayRoundResult) => void>();

  constructor(
    private readonly store: OutboxStore,
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    private readonly wakeup: RelayWakeup,
    private readonly scheduler: SchedulerRegistry,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
    private readonly metrics: MessagingMetrics,
    private readonly tracing: MessageTracing,
  ) {
    const suffix = randomBytes(4).toString('hex');
    this.instanceId = `${options.serviceName}@${hostname()}/${process.pid}/${suffix}`;
    this.pollTimer = `messaging-relay-poll-${suffix}`;
    this.retryTimer = `messaging-relay-retry-${suffix}`;
    this.heldTimer = `messaging-relay-held-${suffix}`;
  }

  onApplicationBootstrap(): void {
    if (!this.options.relay.enabled) return;
    this.started = true;
    this.unlisten = this.wakeup.listen(() => this.wake());
    this.scheduler.addInterval(
      this.pollTimer,
      setInterval(() => this.wake(), this.options.relay.pollIntervalMs),
    );
    this.wake();
  }

  /** Stops claiming, lets the in-flight batch finish and releases this instance's leases. */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.started) return;
    this.stopping = true;
    this.unlisten?.();
    this.deleteTimer('interval', this.pollTimer);
    this.deleteTimer('timeout', this.retryTimer);
    this.deleteTimer('timeout', this.heldTimer);
    await this.loop;
    try {
      const released = await this.store.release(this.instanceId);
      if (released > 0) this.logger.log(`Released ${released} claimed outbox rows on shutdown.`);
    } catch (error) {
      this.logger.warn(
        `Could not release claimed rows on shutdown (their lease will expire): ${describe(error)}`,
      );
    }
  }

  /** Asks for a round now; calls while a round runs are folded into one more round. */
  wake(): void {
    if (this.stopping || !this.started) return;
    this.wakeRequested = true;
    this.loop ??= this.run().finally(() => {
      this.loop = undefined;
      if (this.wakeRequested) this.wake();
    });
  }

  /** Observes every round (tests, metrics). Returns a function that stops observing. */
  onRound(listener: (result: RelayRoundResult) => void): () => void {
    this.roundListeners.add(listener);
    return () => this.roundListeners.delete(listener);
  }

  private async run(): Promise<void> {
    while (this.wakeRequested && !this.stopping) {
      this.wakeRequested = false;
      const wait = this.resumeAt - Date.now();
      if (wait > 0) {
        this.scheduleRetry(wait);
        return;
      }
      const result = await this.round();
      this.roundListeners.forEach((listener) => listener(result));
      // Go on until a claim finds nothing: a short claim does not mean the table is drained (rows held back
      // behind a key's earlier row, or locked by another instance's claim, took places in the batch).
      if (result.confirmed > 0) this.wakeRequested = true;
    }
  }

  private async round(): Promise<RelayRoundResult> {
    const { batchSize, leaseMs } = this.options.relay;
    let rows: ClaimedOutboxRow[];
    try {
      rows = await this.store.claim(batchSize, this.instanceId, leaseMs);
    } catch (error) {
      this.backOff(`Claiming outbox rows failed: ${describe(error)}`);
      return { claimed: 0, confirmed: 0, failed: 0 };
    }
    if (rows.length === 0) {
      if (!this.idleChecked) await this.wakeWhenHeldRowsFree();
      return { claimed: 0, confirmed: 0, failed: 0 };
    }
    this.idleChecked = false;
    this.metrics.claimBatchSize.observe(rows.length);

    const stopTimer = this.metrics.publishDuration.startTimer();
    const outcomes = await this.publish(rows);
    stopTimer();
    const sent: string[] = [];
    const failed: Array<{
      row: ClaimedOutboxRow;
      outcome: Exclude<PublishOutcome, { status: 'CONFIRMED' }>;
    }> = [];
    const now = Date.now();
    rows.forEach((row, i) => {
      const outcome = outcomes[i];
      if (outcome.status === 'CONFIRMED') {
        sent.push(row.id);
        this.metrics.published.inc({ destination: row.destination });
        if (row.attempts === 0) this.metrics.commitToPublish.observe((now - row.createdAt.getTime()) / 1000);
      } else {
        failed.push({ row, outcome });
        this.metrics.publishFailures.inc({ destination: row.destination, outcome: outcome.status });
      }
    });

    const retryInMs = failed.length > 0 ? this.nextBackoffMs(sent.length === 0) : 0;
    try {
      await this.store.markSent(sent);
      await this.store.markFailed(
        failed.map(({ row, outcome }): FailedOutboxRow => ({
          id: row.id,
          error: `${outcome.status}: ${describe(outcome.error)}`.slice(0, 500),
          retryInMs,
        })),
      );
    } catch (error) {
      // The broker has the messages; their rows stay claimed until the lease expires and are then sent
      // again: a duplicate, never a loss.
      this.backOff(`Marking outbox rows failed after publishing: ${describe(error)}`);
    }
    if (failed.length > 0) {
      const first = failed[0];
      this.logger.warn(
        `${failed.length} of ${rows.length} messages not confirmed (first: ${first.row.messageId} to ` +
          `${first.row.destination}: ${first.outcome.status} ${describe(first.outcome.error)}); retrying in ${retryInMs} ms.`,
      );
      if (sent.length === 0) {
        this.metrics.brokerErrors.inc({ transport: this.transport.kind, operation: 'publish' });
        this.pauseFor(retryInMs);
      } else {
        // The rest of the batch went through, so no pause; but come back when the failed rows are due, or
        // they would wait for the next commit or the safety poll.
        this.scheduleRetry(retryInMs);
      }
    } else {
      this.failures = 0;
    }
    return { claimed: rows.length, confirmed: sent.length, failed: failed.length };
  }

  /** Publishes the rows, in id order; gives up waiting before the lease can expire (then AMBIGUOUS). */
  private async publish(rows: readonly ClaimedOutboxRow[]): Promise<PublishOutcome[]> {
    const traced = this.tracing.publish(
      this.transport.kind,
      rows.map((row) => encodeEnvelope(row, row.payloadJson)),
    );
    const messages = traced.messages;
    const timeoutMs = Math.floor(this.options.relay.leaseMs * 0.8);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<PublishOutcome[]>((resolve) => {
      timer = setTimeout(() => {
        const error = new Error(`no broker confirmation within ${timeoutMs} ms`);
        resolve(rows.map(() => ({ status: 'AMBIGUOUS', error })));
      }, timeoutMs);
    });
    try {
      const outcomes = await Promise.race([this.transport.publish(messages), timeout]);
      traced.end(outcomes);
      return outcomes;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The delay before rows that failed are tried again: exponential in consecutive failed rounds, full jitter. */
  private nextBackoffMs(wholeRoundFailed: boolean): number {
    if (wholeRoundFailed) this.failures += 1;
    const { retryInitialDelayMs, retryMaxDelayMs } = this.options.relay;
    const backoff = { initialDelayMs: retryInitialDelayMs, multiplier: 2, maxDelayMs: retryMaxDelayMs };
    return computeRetryDelay(backoff, Math.max(1, this.failures), Math.random);
  }

  private backOff(message: string): void {
    this.failures += 1;
    const delay = this.nextBackoffMs(false);
    this.logger.warn(`${message}; retrying in ${delay} ms.`);
    this.pauseFor(delay);
  }

  private pauseFor(delayMs: number): void {
    this.resumeAt = Date.now() + delayMs;
    this.scheduleRetry(delayMs);
  }

  /** One retry timer; it keeps the later due time, so that its wake-up finds every row failed so far due. */
  private scheduleRetry(delayMs: number): void {
    const dueAt = Date.now() + delayMs;
    if (dueAt <= this.retryDueAt && this.scheduler.doesExist('timeout', this.retryTimer)) return;
    this.retryDueAt = dueAt;
    this.deleteTimer('timeout', this.retryTimer);
    this.scheduler.addTimeout(
      this.retryTimer,
      setTimeout(() => {
        this.deleteTimer('timeout', this.retryTimer);
        this.wake();
      }, delayMs),
    );
  }

  /**
   * After the first empty claim that follows work (and at startup): rows may be waiting on a lease (a
   * crashed instance's claim) or a backoff; wake when the first frees up rather than at the next safety poll.
   * Steady idling costs no extra query.
   */
  private async wakeWhenHeldRowsFree(): Promise<void> {
    this.idleChecked = true;
    try {
      const freeAt = await this.store.nextHeldRowFreeAt();
      if (freeAt === undefined) return;
      const at = freeAt.getTime() + 10;
      if (this.heldWakeAt > Date.now() && this.heldWakeAt <= at) return;
      this.heldWakeAt = at;
      this.deleteTimer('timeout', this.heldTimer);
      const timer = setTimeout(
        () => {
          this.deleteTimer('timeout', this.heldTimer);
          this.idleChecked = false;
          this.wake();
        },
        Math.max(0, at - Date.now()),
      );
      this.scheduler.addTimeout(this.heldTimer, timer);
    } catch {
      // The safety poll finds the rows anyway.
    }
  }

  private deleteTimer(kind: 'interval' | 'timeout', name: string): void {
    const exists =
      kind === 'interval'
        ? this.scheduler.doesExist('interval', name)
        : this.scheduler.doesExist('timeout', name);
    if (!exists) return;
    if (kind === 'interval') this.scheduler.deleteInterval(name);
    else this.scheduler.deleteTimeout(name);
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
