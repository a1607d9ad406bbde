import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { Clock } from '../common/clock';
import {
  MESSAGING_CLOCK,
  MESSAGING_RESOLVED_OPTIONS,
  MESSAGING_TENANT_RELAY,
  MESSAGING_TRANSPORT,
} from '../messaging.constants';
import { MessageTracing } from '../observability/message-tracing';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { MessageTransport } from '../transports/message-transport.interface';
import { PublishOutcome } from '../transports/publish-outcome';
import { ClaimedOutboxRow } from './outbox-row';
import { OutboxStore } from './outbox-store';
import {
  confirmedNothing,
  holdBackBehindFailures,
  joinBatches,
  keyOf,
  SortedOutcomes,
  sortOutcomes,
} from './publishing/batch-outcomes';
import { publishRows } from './publishing/publish-rows';
import { publishRetryDelay } from './publishing/publishing-rules';

/** A published batch of claimed rows, sorted by what the broker said (the publishing rules' `sortOutcomes`). */
type PublishedBatch = SortedOutcomes<ClaimedOutboxRow>;
import { OutageLog } from '../transports/outage-log';
import { RelayTimers } from './relay-timers';
import { RelayWakeup } from './relay-wakeup';
import { FairTurns } from '../common/fair-turns';

/**
 * Publish batches one claim takes under a backlog: the claim's statement costs less per row the more rows it
 * takes (one plan, one probe per key, one commit), and the broker still gets batches of `relay.batchSize`.
 * Measured (bench/README.md: 20,000 rows, batches of 200): PostgreSQL's time per row about 15% lower than with one.
 */
const CLAIM_BATCHES = 2;

/**
 * The share of the lease a claim's rows may spend being published, counted from the moment the claim was
 * sent (`Claim.sentAt`); the rest is left for marking them, before another instance may take them over.
 */
const PUBLISH_SHARE_OF_LEASE = 0.8;

/**
 * Scheduled messages one move takes into the outbox (one statement); when it takes that many, more are due and
 * the relay moves again before its next claim.
 */
const SCHEDULED_MOVE_LIMIT = 1_000;

/**
 * Added to the database's "next scheduled message due in": the wake-up comes just after it is due by the
 * database's clock, not a moment before (it would find nothing and have to look again).
 */
const SCHEDULED_WAKE_SLACK_MS = 5;

/**
 * How long the last batch of a drain, published and confirmed, waits to be marked sent by the next round's
 * claim (one statement for both) before it is marked on its own. At a steady flow of commits (200/s: one every
 * 5 ms, each its own round) the next commit's claim carries it: one relay statement per message instead of two
 * (issue 39). Nothing waits on it but the round's report: the rows are on the broker, still leased to this
 * relay, and the lease leaves them at least a fifth of itself (200 ms or more) after the publish to be marked.
 */
export const MARK_SENT_WAIT_MS = 20;

/** Rows one claim leased, and when it was sent. */
interface Claim {
  readonly rows: ClaimedOutboxRow[];
  /**
   * The claim's window was full: more claimable rows may wait past it, so the next claim goes out while
   * these rows are on the wire. Otherwise it took every row claimable when it ran, and only a wake-up since
   * (a commit, NOTIFY, a timer) can have brought more.
   */
  readonly full: boolean;
  /**
   * This process's clock when the claim was sent. The database started the lease when it ran the claim,
   * later, so a lease counted from here ends no later than the database's, whatever the offset between the
   * two clocks.
   */
  readonly sentAt: number;
}

/**
 * A relay of one tenant's outbox (`MessagingTenants`): named in its logs, and claiming in turns shared with the
 * other tenants' relays (`FairTurns`).
 */
export interface TenantRelaySettings {
  readonly tenant: string;
  readonly turns: FairTurns;
}

/** What one relay round (one claim, published batch by batch) did. */
export interface RelayRoundResult {
  readonly claimed: number;
  readonly confirmed: number;
  readonly failed: number;
}

/**
 * Publishes outbox rows: claim a batch (lease, per-key order) → publish it → mark each confirmed row sent;
 * rows the broker did not confirm stay pending and are tried again after a backoff. While a batch is on the
 * wire the next one is claimed and the previous one marked, so the database work hides behind the broker's.
 * It wakes on a local commit, on NOTIFY from other instances (optional), when rows held by a lease or a
 * backoff free up, and on a slow safety poll: quick under load, quiet when idle.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger: Logger;
  /** Rounds in which the broker confirmed nothing, summarised (see `OutageLog`). */
  private readonly outage: OutageLog;
  /** Identifies this process's claims (`locked_by`). */
  readonly instanceId: string;
  private readonly timers: RelayTimers;
  private loop?: Promise<void>;
  private wakeRequested = false;
  private stopping = false;
  private started = false;
  /** Consecutive rounds in which nothing was confirmed (broker down): drives the backoff. */
  private failures = 0;
  private resumeAt = 0;
  /** An empty claim since the last busy one has looked for rows held by leases or backoff. */
  private idleChecked = false;
  /**
   * The last batch of a drain: published, not yet marked; the next drain's first claim marks it (one
   * statement for both), or it is marked on its own `MARK_SENT_WAIT_MS` after the drain when no drain
   * followed (`markDue`), or at shutdown.
   */
  private unmarked?: { batch: PublishedBatch; settled: Promise<void> };
  /** `MARK_SENT_WAIT_MS` passed since a drain left `unmarked`: the next `run` marks it on its own. */
  private markDue = false;
  /**
   * This process's clock at which to look at the scheduled messages again (the next is due then, as the
   * database said); 0: at the next round (startup, the safety poll, a local transaction that scheduled one).
   */
  private scheduledCheckAt = 0;
  private unlisten?: () => void;
  private readonly roundListeners = new Set<(result: RelayRoundResult) => void>();

  constructor(
    private readonly store: OutboxStore,
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    private readonly wakeup: RelayWakeup,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
    private readonly metrics: MessagingMetrics,
    private readonly tracing: MessageTracing,
    @Inject(MESSAGING_CLOCK) private readonly clock: Clock,
    @Optional() @Inject(MESSAGING_TENANT_RELAY) private readonly tenant?: TenantRelaySettings,
  ) {
    this.logger = new Logger(tenant ? `${OutboxRelay.name}[${tenant.tenant}]` : OutboxRelay.name);
    const suffix = randomBytes(4).toString('hex');
    this.instanceId = `${options.serviceName}@${hostname()}/${process.pid}/${suffix}`;
    this.outage = new OutageLog(this.logger, 'Publishing outbox messages', clock);
    this.timers = new RelayTimers(
      clock,
      () => this.wake(),
      () => {
        this.idleChecked = false;
        this.wake();
      },
      () => {
        this.scheduledCheckAt = 0;
        this.wake();
      },
      () => {
        this.markDue = true;
        this.startLoop();
      },
    );
  }

  onApplicationBootstrap(): void {
    if (!this.options.relay.enabled) return;
    this.started = true;
    this.unlisten = this.wakeup.listen((signal) => {
      if (signal?.scheduled) this.scheduledCheckAt = 0;
      this.wake();
    });
    this.timers.startPoll(this.options.relay.pollIntervalMs);
    this.wake();
  }

  /** Stops claiming, lets the in-flight batch finish and releases this instance's leases. */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.started) return;
    this.stopping = true;
    this.unlisten?.();
    this.timers.clear();
    await this.loop;
    // A drain's last batch waiting for the next claim to mark it (no round ran since).
    await this.markUnmarked();
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
    this.startLoop();
  }

  /** Runs rounds while wake-ups ask for them (and marks a waiting batch when due), one loop at a time. */
  private startLoop(): void {
    if (this.stopping || !this.started) return;
    this.loop ??= this.run()
      .catch((error: unknown) => this.roundFailed(error))
      .finally(() => {
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
    try {
      while (this.wakeRequested && !this.stopping) {
        this.wakeRequested = false;
        const wait = this.resumeAt - this.clock.now();
        if (wait > 0) {
          this.timers.retryIn(wait);
          return;
        }
        await this.drain();
      }
    } finally {
      // The drain's last batch waits for the next commit's claim to mark it, a little while (issue 39).
      if (this.unmarked && (this.stopping || this.markDue)) await this.markUnmarked();
      else if (this.unmarked) this.timers.markIn(MARK_SENT_WAIT_MS);
      this.markDue = false;
    }
  }

  /** Marks the batch a drain left for the next claim on its own, and reports its round. */
  private async markUnmarked(): Promise<void> {
    const unmarked = this.unmarked;
    this.unmarked = undefined;
    if (!unmarked) return;
    await this.markSent(unmarked.batch);
    await this.finish(unmarked);
  }

  /**
   * Claims and publishes until no more rows are known to wait. A claim takes up to `CLAIM_BATCHES` publish
   * batches (one statement for all, the database's larger share of a round), which go out one after the
   * other. When more rows may wait (the claim's window was full, or a wake-up came since it was sent) the
   * next claim runs while they are on the wire (it may take the rows queued behind their keys: they go out
   * only after them), and the rows confirmed before are marked sent with it: in the claim's statement
   * (PostgreSQL: one statement per round) or beside it on another connection (MySQL/MariaDB;
   * `OutboxStore.marksSentInClaim`). Otherwise no claim goes beside the publish (it would find nothing: a
   * statement per message more at a steady trickle): the batch before is marked on its own, and the last
   * batch of the drain is marked by the next drain's first claim when a wake-up came during its publish, or
   * on its own. A key with an unconfirmed message is not published further by this round or from the claim
   * made beside it: its later rows are released to wait behind it (later claims leave them, the failed row
   * being held by its backoff).
   */
  private async drain(): Promise<void> {
    if (this.scheduledDue()) await this.moveDueScheduled();
    // The batch before: published and settled, its confirmed rows marked sent by the next claim.
    let previous = this.unmarked;
    this.unmarked = undefined;
    this.markDue = false;
    this.timers.cancelMark();
    let claim = await this.claimMarking(previous, []);
    if (previous) await this.finish(previous);
    previous = undefined;
    if (claim.rows.length === 0 && !this.idleChecked) {
      await this.wakeWhenHeldRowsFree();
      // A row whose lease or backoff ended between that claim and the look was free for the look and not
      // yet for the claim: claim once more, or it waits for the safety poll.
      claim = await this.claim([], []);
    }
    if (claim.rows.length === 0) return this.report({ claimed: 0, confirmed: 0, failed: 0 });
    while (claim.rows.length > 0 && !this.stopping) {
      this.idleChecked = false;
      // Under a backlog the drain does not end: scheduled messages that came due meanwhile are moved here.
      if (this.scheduledDue()) await this.moveDueScheduled();
      const ahead = claim.full || this.wakeRequested;
      const marking = previous && !ahead ? this.markSent(previous.batch) : undefined;
      const next = ahead ? this.claimMarking(previous, claim.rows) : undefined;
      // Let the claim reach the database before the publish takes the thread (a Kafka client encodes a batch
      // in one go): the two then overlap instead of the claim waiting for the encoding.
      if (next) await this.clock.nextTurn();
      // Keys with a message this publish did not confirm, or did not send: their rows in the claim made beside
      // it wait behind that message (released). Later claims see the failed rows backing off (or still leased
      // to this relay) and the unsent ones free again, and keep each key's order by themselves.
      const failedKeys = new Set<string>();
      const { batch, unpublished } = await this.publishClaimed(claim, failedKeys);
      const held = [...unpublished, ...batch.heldBack.map(({ item }) => item)];
      if (held.length > 0) await this.releaseHeld(held);
      const claimed: Claim = next ? await next : { rows: [], sentAt: this.clock.now(), full: false };
      await marking;
      if (previous) await this.finish(previous); // a round is reported once marked
      previous = { batch, settled: this.settle(batch) };
      const { publish, release } = holdBackBehindFailures(claimed.rows, failedKeys);
      const pausing = confirmedNothing(batch);
      const releasing = pausing ? [...publish, ...release] : release;
      if (releasing.length > 0) await this.releaseHeld(releasing);
      claim = { rows: pausing ? [] : publish, sentAt: claimed.sentAt, full: claimed.full && !pausing };
    }
    if (!previous) return;
    if (!this.stopping && previous.batch.confirmed.length > 0) {
      // Marked by the next drain's first claim: at once when a wake-up came meanwhile (`run` goes on), or
      // when the next commit comes within `MARK_SENT_WAIT_MS`; otherwise on its own then (`run`).
      this.unmarked = previous;
      return;
    }
    await this.markSent(previous.batch);
    await this.finish(previous);
  }

  /**
   * Claims rows, with the confirmed rows of `previous` marked sent in the claim or beside it (per database)
   * and the rows of `previous` and `onTheWire` never claimed again.
   */
  private async claimMarking(
    previous: { batch: PublishedBatch } | undefined,
    onTheWire: readonly ClaimedOutboxRow[],
  ): Promise<Claim> {
    const sent = previous ? previous.batch.confirmed.map((row) => row.id) : [];
    const inClaim = this.store.marksSentInClaim;
    const marking = previous && !inClaim ? this.markSent(previous.batch) : undefined;
    const claim = this.claim([...sent, ...onTheWire.map((row) => row.id)], inClaim ? sent : []);
    await marking;
    return claim;
  }

  /**
   * Publishes claimed rows batch by batch (`relay.batchSize` each, in id order), all within the share of the
   * lease the claim left for publishing (counted from the claim: its rows may have waited for the batches
   * before). A key with an unconfirmed message is added to `failedKeys` and its later rows are not
   * published; a batch with nothing confirmed (the broker is down) ends the publishing. The rows left
   * unpublished are returned, to be released; their keys are held back like failed ones.
   */
  private async publishClaimed(
    claim: Claim,
    failedKeys: Set<string>,
  ): Promise<{ batch: PublishedBatch; unpublished: ClaimedOutboxRow[] }> {
    const { batchSize, leaseMs } = this.options.relay;
    const { rows } = claim;
    const deadline = claim.sentAt + Math.floor(leaseMs * PUBLISH_SHARE_OF_LEASE);
    const published: PublishedBatch[] = [];
    const unpublished: ClaimedOutboxRow[] = [];
    for (let start = 0; start < rows.length; start += batchSize) {
      const { publish, release } = holdBackBehindFailures(rows.slice(start, start + batchSize), failedKeys);
      unpublished.push(...release);
      const timeoutMs = deadline - this.clock.now();
      const brokerDown = published.length > 0 && published.every(confirmedNothing);
      if (brokerDown || timeoutMs <= 0) {
        unpublished.push(...publish, ...rows.slice(start + batchSize));
        break;
      }
      if (publish.length === 0) continue;
      const batch = sortOutcomes(publish, await this.publish(publish, timeoutMs), keyOf);
      batch.unconfirmed.forEach(({ item }) => failedKeys.add(keyOf(item)));
      published.push(batch);
    }
    unpublished.forEach((row) => failedKeys.add(keyOf(row)));
    return { batch: joinBatches(published), unpublished };
  }

  /** Time to look at the scheduled messages (checked before awaiting the look: no turn spent otherwise). */
  private scheduledDue(): boolean {
    return this.clock.now() >= this.scheduledCheckAt;
  }

  /**
   * When the next scheduled message is due (or at a safety poll, or after a local transaction scheduled one):
   * moves the due ones into the outbox, where this drain's claims find them, and sets the wake-up for the next
   * one from the database's "due in" (its clock, not this process's: no skew between the two counts).
   */
  private async moveDueScheduled(): Promise<void> {
    if (!this.scheduledDue()) return;
    this.scheduledCheckAt = Number.POSITIVE_INFINITY;
    try {
      const { moved, nextDueInMs, dropped } = await this.store.moveDueScheduled(SCHEDULED_MOVE_LIMIT);
      if (dropped) {
        this.logger.warn(
          `${dropped} due scheduled message(s) not published: the outbox held their message ids already (an ` +
            'unscheduled add() was given the id of a scheduled message that waited; that one was published).',
        );
      }
      // Claim what was moved: beside this drain's publish, or in one more round (a claim beside a publish is
      // made only when more rows may wait: issue 39).
      if (moved > 0) this.wakeRequested = true;
      if (moved >= SCHEDULED_MOVE_LIMIT) {
        // More are due: move them before the next claim (or in the next round).
        this.scheduledCheckAt = 0;
        this.wakeRequested = true;
      } else if (nextDueInMs !== undefined) {
        const wait = Math.max(0, Math.ceil(nextDueInMs)) + SCHEDULED_WAKE_SLACK_MS;
        this.scheduledCheckAt = this.clock.now() + wait;
        this.timers.scheduledIn(wait);
      }
    } catch (error) {
      this.scheduledCheckAt = 0;
      this.backOff(`Moving due scheduled messages into the outbox failed: ${describe(error)}`);
    }
  }

  /** Releases claimed rows that were not published, without counting an attempt (their lease expires anyway). */
  private async releaseHeld(rows: readonly ClaimedOutboxRow[]): Promise<void> {
    await this.store
      .releaseRows(
        rows.map((row) => row.id),
        this.instanceId,
      )
      .catch(() => undefined);
  }

  private async claim(inFlight: string[], sent: string[]): Promise<Claim> {
    const { batchSize, leaseMs } = this.options.relay;
    const limit = batchSize * CLAIM_BATCHES;
    // A tenant's relay claims in its turn: round-robin with the other tenants' (one claim each).
    const giveBack = this.tenant ? await this.tenant.turns.acquire() : undefined;
    const sentAt = this.clock.now();
    // This claim sees every row committed before now: the wake-ups so far are answered by it, except a
    // scheduling commit's since the round looked at the scheduled messages (that asks for another look).
    this.wakeRequested = this.scheduledCheckAt === 0;
    try {
      const rows = await this.store.claim(limit, this.instanceId, leaseMs, inFlight, sent);
      if (rows.length > 0) this.metrics.claimBatchSize.observe(rows.length);
      return { rows, sentAt, full: rows.windowFull ?? rows.length >= limit };
    } catch (error) {
      // With the claim, the marking of `sent` failed: see markSent.
      this.backOff(
        `Claiming outbox rows${sent.length > 0 ? ' (and marking the batch before sent)' : ''} failed: ${describe(error)}`,
      );
      return { rows: [], sentAt, full: false };
    } finally {
      giveBack?.();
    }
  }

  /** Marks a batch's confirmed rows sent on their own (the last batch of a drain). */
  private async markSent(batch: PublishedBatch): Promise<void> {
    try {
      await this.store.markSent(
        batch.confirmed.map((row) => row.id),
        this.instanceId,
      );
    } catch (error) {
      // The broker has the messages; their rows stay claimed until the lease expires and are then sent
      // again: a duplicate, never a loss.
      this.backOff(`Marking outbox rows failed after publishing: ${describe(error)}`);
    }
  }

  /** Reports a round once its rows are marked and its failures recorded. */
  private async finish(round: { batch: PublishedBatch; settled: Promise<void> }): Promise<void> {
    await round.settled;
    const { batch } = round;
    this.report({
      claimed: batch.items.length,
      confirmed: batch.confirmed.length,
      failed: batch.unconfirmed.length,
    });
  }

  /**
   * Records what the broker said: metrics, and the rows it did not confirm back to pending after a backoff.
   * (Confirmed rows are marked sent by the next claim, or by `markSent` at the end of a drain.)
   */
  private async settle(batch: PublishedBatch): Promise<void> {
    const now = this.clock.now();
    for (const row of batch.confirmed) {
      this.metrics.published.inc({ destination: row.destination });
      if (row.attempts === 0) this.metrics.commitToPublish.observe((now - row.createdAt.getTime()) / 1000);
    }
    batch.unconfirmed.forEach(({ item: row, outcome }) =>
      this.metrics.publishFailures.inc({ destination: row.destination, outcome: outcome.status }),
    );
    if (batch.unconfirmed.length === 0) {
      this.failures = 0;
      this.outage.recovered();
      return;
    }
    const brokerDown = confirmedNothing(batch);
    const retryInMs = this.nextBackoffMs(brokerDown);
    try {
      await this.store.markFailed(
        batch.unconfirmed.map(({ item: row, outcome }) => ({
          id: row.id,
          error: `${outcome.status}: ${describe(outcome.error)}`.slice(0, 500),
          retryInMs,
        })),
        this.instanceId,
      );
    } catch (error) {
      // The rows stay claimed until the lease expires and are then tried again.
      this.backOff(`Recording failed publishes failed: ${describe(error)}`);
    }
    const first = batch.unconfirmed[0];
    const line =
      `${batch.unconfirmed.length} of ${batch.items.length} messages not confirmed (first: ${first.item.messageId} ` +
      `to ${first.item.destination}: ${first.outcome.status} ${describe(first.outcome.error)})`;
    // A round with nothing confirmed is the broker away: one line when it starts, a summary while it lasts
    // (not a line a second). Refusals of some messages beside confirmed ones are said each time.
    if (brokerDown) this.outage.failure(line);
    else {
      this.outage.recovered();
      this.logger.warn(`${line}; retrying in ${retryInMs} ms.`);
    }
    if (brokerDown) {
      this.metrics.brokerErrors.inc({ transport: this.transport.kind, operation: 'publish' });
      // Half the failed rows' delay: the next round comes while they still wait, so that rows of other keys
      // go then. A key or destination that keeps refusing would otherwise fill every round's claim as its
      // rows come due again just when the relay resumes, and hold back all the others.
      this.pauseFor(Math.ceil(retryInMs / 2));
    } else {
      // The rest went through, so no pause; but come back when the failed rows are due.
      this.timers.retryIn(retryInMs);
    }
  }

  /** Publishes the rows as one batch, in id order; gives up waiting after `timeoutMs` (then AMBIGUOUS). */
  private async publish(rows: readonly ClaimedOutboxRow[], timeoutMs: number): Promise<PublishOutcome[]> {
    const stopTimer = this.metrics.publishDuration.startTimer();
    try {
      return await publishRows(this.transport, this.tracing, rows, timeoutMs, this.clock);
    } finally {
      stopTimer();
    }
  }

  /** The delay before rows that failed are tried again: exponential in consecutive failed rounds, full jitter. */
  private nextBackoffMs(wholeRoundFailed: boolean): number {
    if (wholeRoundFailed) this.failures += 1;
    return publishRetryDelay(this.options.relay, this.failures, () => this.clock.random());
  }

  /** What escaped a round (a bug, a listener that threw): logged; the relay backs off and goes on. */
  private roundFailed(error: unknown): void {
    this.logger.error(
      `An outbox relay round failed: ${describe(error)}. Its claimed rows wait for their lease to end.`,
      error instanceof Error ? error.stack : undefined,
    );
    this.backOff('The relay backs off after a failed round');
  }

  private backOff(message: string): void {
    this.failures += 1;
    const delay = this.nextBackoffMs(false);
    this.logger.warn(`${message}; retrying in ${delay} ms.`);
    this.pauseFor(delay);
  }

  private pauseFor(delayMs: number): void {
    this.resumeAt = this.clock.now() + delayMs;
    this.timers.retryIn(delayMs);
  }

  /**
   * After the first empty claim that follows work (and at startup): rows may be waiting on a lease (a
   * crashed instance's claim) or a backoff; wake when the first frees up rather than at the next safety
   * poll. Steady idling costs no extra query.
   */
  private async wakeWhenHeldRowsFree(): Promise<void> {
    this.idleChecked = true;
    try {
      const freeAt = await this.store.nextHeldRowFreeAt();
      if (freeAt !== undefined) this.timers.wakeAt(freeAt.getTime() + 10);
    } catch {
      // The safety poll finds the rows anyway.
    }
  }

  private report(result: RelayRoundResult): void {
    this.roundListeners.forEach((listener) => listener(result));
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
