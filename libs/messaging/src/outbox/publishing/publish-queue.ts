import { PublishOutcome } from '../../transports/publish-outcome';
import { ClaimedOutboxRow, NewOutboxRow } from '../outbox-row';
import { keyOf, sortOutcomes } from './batch-outcomes';
import { countsAsOwnFailure, DEFAULT_PARK_RULE, goesAlone, ParkRule, shouldPark } from './publishing-rules';

/** A message of a source unit; `parkReason` set: the source could not give it a broker (it goes to the park). */
export type SourceRow = NewOutboxRow & { readonly parkReason?: string };

/**
 * One unit of a source, in the order the source gives them: a committed transaction of PostgreSQL's log (its
 * end position, its commit time, our messages in it). A unit without messages only moves the position on.
 */
export interface SourceUnit {
  /** Where the unit ends in the source: the position that may be confirmed once it is done with. */
  readonly position: bigint;
  readonly committedAtMs: number;
  readonly rows: readonly SourceRow[];
}

/** Where a message is: waiting (maybe for a retry time), on the wire, being parked, or done with. */
type EntryState = 'waiting' | 'publishing' | 'parking' | 'done';

/** A message of the queue, as a relay publishes or parks it. */
export interface QueuedMessage {
  /** The message in the relay's row shape (`id`: its place in the source, `createdAt`: its commit). */
  readonly row: ClaimedOutboxRow;
  /** `keyOf(row)`: its ordering lane. */
  readonly key: string;
  /** Publishes that were not confirmed so far. */
  readonly attempts: number;
  /** Of these, the failures that were its own (see `countsAsOwnFailure`). */
  readonly failures: number;
  /** Why it is parked, once the rules decided so: it never goes to the broker again. */
  readonly parkReason?: string;
}

interface Entry extends QueuedMessage {
  state: EntryState;
  attempts: number;
  failures: number;
  firstFailureAt?: number;
  parkReason?: string;
  availableAt: number;
  /** Failed in a batch with others: goes alone from now on, so that a failure is this message's own. */
  solo: boolean;
  readonly unit: Unit;
}

interface Unit {
  readonly position: bigint;
  readonly committedAtMs: number;
  readonly entries: Entry[];
  /** Messages not done yet. */
  remaining: number;
}

/** What a relay does with messages `take()` handed out. */
export interface TakenMessages {
  /** To publish, in order, as one batch. */
  readonly publish: QueuedMessage[];
  /** To park, in order (`parkReason` says why); then `parked()` or `parkingFailed()`. */
  readonly park: QueuedMessage[];
}

/** What `settle()` decided. */
export interface Settlement {
  /** Confirmed, and no earlier message of their key unconfirmed: done with, in order. */
  readonly done: QueuedMessage[];
  /** Failed too often (the park rule): to park, never to publish again. */
  readonly toPark: QueuedMessage[];
  /** Unconfirmed messages that wait for a retry. */
  readonly retrying: number;
  /** Messages behind an unconfirmed one of their key, confirmed or not: they go again after it. */
  readonly heldBack: number;
}

/** The broker's situation when a batch was answered, and the backoff. */
export interface SettleContext {
  readonly now: number;
  /**
   * The broker answers (something was confirmed, or its health check reached it): only then does a failure
   * count toward parking. While it is down every publish fails, and nothing is the message's fault.
   */
  readonly brokerUp: boolean;
  /** When a message not confirmed `attempts` times (this one included) may go again, ms from now. */
  readonly retryInMs: (attempts: number) => number;
  /** When to park a message that keeps failing. Default: `DEFAULT_PARK_RULE`. */
  readonly park?: ParkRule;
}

/**
 * The publishing rules over messages a relay read ahead of the broker, without I/O: the source's units in
 * order and what became of each of their messages.
 * - Lanes: a message is handed out only once every earlier message of its key is done, or goes in the same
 *   batch before it; a message waiting for a retry, on the wire or being parked holds its key's later ones.
 * - Outcomes (`sortOutcomes`): a confirmed message is done unless an earlier one of its key in the batch was
 *   not confirmed; then it is held back and goes again after it.
 * - Parking (`shouldPark`): a message whose own failures (REJECTED or AMBIGUOUS, alone, the broker answering)
 *   reach the park rule is parked, with every later message of its key, so that a key that never succeeds
 *   holds neither the others nor the source's position.
 * - Memory: `retained` counts every unit and every message held, done or not, until the position passes them;
 *   the relay stops reading at `retainedLimit` (`publishing-rules.ts`).
 * - Position: `confirmable()` is the end of the last unit before the first one with a message not done.
 */
export class PublishQueue {
  private readonly units: Unit[] = [];
  private confirmedPosition: bigint;
  /** Messages not done yet. */
  private pending = 0;
  /** Messages held in the retained units (done or not). */
  private heldMessages = 0;
  /** Messages waiting for a retry time (`availableAt` set): `nextRetryAt` looks only when there are some. */
  private retrying = 0;

  /** `start`: the source's confirmed position when reading started. */
  constructor(start: bigint) {
    this.confirmedPosition = start;
  }

  /** Adds the source's next unit; one without messages and nothing before it only moves the position on. */
  add(source: SourceUnit): void {
    if (source.rows.length === 0 && this.units.length === 0) {
      this.advance(source.position);
      return;
    }
    const unit: Unit = {
      position: source.position,
      committedAtMs: source.committedAtMs,
      entries: [],
      remaining: source.rows.length,
    };
    source.rows.forEach(({ parkReason, ...row }, i) => {
      unit.entries.push({
        parkReason,
        row: {
          ...row,
          id: `${source.position.toString()}:${i}`,
          attempts: 0,
          createdAt: new Date(source.committedAtMs),
        },
        key: keyOf(row),
        state: 'waiting',
        attempts: 0,
        failures: 0,
        availableAt: 0,
        solo: false,
        unit,
      });
    });
    this.units.push(unit);
    this.pending += source.rows.length;
    this.heldMessages += source.rows.length;
  }

  /** Moves the position on to `position` (never back): the source said it starts there. */
  startAt(position: bigint): void {
    this.advance(position);
  }

  /**
   * The next messages, at most `max`, in source order: waiting ones whose time has come and whose key has no
   * earlier message still to go. Those the rules decided to park, or whose key `parkedLane` says is parked
   * (its earlier messages wait elsewhere), go to `park`; the others to `publish`. A message once failed in a
   * batch with others is published in a batch of its own.
   */
  take(now: number, max: number, parkedLane: (key: string) => boolean = () => false): TakenMessages {
    const publish: Entry[] = [];
    const park: Entry[] = [];
    const blocked = new Set<string>();
    for (const unit of this.units) {
      for (const entry of unit.entries) {
        if (publish.length + park.length >= max) return { publish, park };
        if (entry.state === 'done') continue;
        const ready = entry.state === 'waiting' && entry.availableAt <= now && !blocked.has(entry.key);
        if (!ready) {
          blocked.add(entry.key);
          continue;
        }
        if (entry.parkReason !== undefined || parkedLane(entry.key)) {
          entry.parkReason ??= 'behind a parked message of its key';
          this.start(entry, 'parking');
          park.push(entry);
          blocked.add(entry.key);
          continue;
        }
        if (entry.solo) {
          if (publish.length > 0) {
            blocked.add(entry.key);
            continue;
          }
          this.start(entry, 'publishing');
          return { publish: [entry], park };
        }
        this.start(entry, 'publishing');
        publish.push(entry);
      }
    }
    return { publish, park };
  }

  /** Records the broker's answers to a batch `take()` handed out (one outcome per message, in order). */
  settle(
    batch: readonly QueuedMessage[],
    outcomes: readonly PublishOutcome[],
    context: SettleContext,
  ): Settlement {
    const entries = batch as Entry[];
    const sorted = sortOutcomes(entries, outcomes, (entry) => entry.key);
    const { now, brokerUp } = context;
    for (const entry of sorted.confirmed) this.done(entry);
    const toPark: Entry[] = [];
    let retrying = 0;
    for (const { item: entry, outcome } of sorted.unconfirmed) {
      entry.attempts += 1;
      if (goesAlone(batch.length, brokerUp)) entry.solo = true;
      if (countsAsOwnFailure(batch.length, brokerUp)) {
        entry.failures += 1;
        entry.firstFailureAt ??= now;
      }
      if (shouldPark(entry.failures, entry.firstFailureAt, now, context.park ?? DEFAULT_PARK_RULE)) {
        entry.state = 'parking';
        entry.parkReason = `${entry.failures} failure(s), the last ${describeOutcome(outcome)}`;
        toPark.push(entry);
      } else {
        this.waitUntil(entry, now + context.retryInMs(entry.attempts));
        retrying += 1;
      }
    }
    // Behind an unconfirmed message of their key: ready again, held by it in `take`.
    for (const { item: entry } of sorted.heldBack) entry.state = 'waiting';
    return { done: [...sorted.confirmed], toPark, retrying, heldBack: sorted.heldBack.length };
  }

  /** The messages were parked (written where an operator sees them, and the polling relay publishes them): done. */
  parked(batch: readonly QueuedMessage[]): void {
    for (const entry of batch as Entry[]) this.done(entry);
  }

  /** Parking failed (the database): the messages wait to be parked again from `availableAt`, never published. */
  parkingFailed(batch: readonly QueuedMessage[], availableAt: number): void {
    for (const entry of batch as Entry[]) this.waitUntil(entry, availableAt);
  }

  /**
   * The position the source may be told everything before is done with: the end of the last unit before the
   * first one with a message not done (or of the last one, when all are done). Never goes back. The units
   * passed are forgotten.
   */
  confirmable(): bigint {
    while (this.units.length > 0 && this.units[0].remaining === 0) {
      const unit = this.units.shift()!;
      this.heldMessages -= unit.entries.length;
      this.advance(unit.position);
    }
    return this.confirmedPosition;
  }

  /**
   * The source has sent everything up to `position` and no unit is open: when nothing is held, the position
   * may move on to there (the source grew with others' writes only).
   */
  idleUpTo(position: bigint): void {
    this.confirmable();
    if (this.units.length === 0) this.advance(position);
  }

  /** Messages not done yet. */
  get size(): number {
    return this.pending;
  }

  /**
   * Everything held in memory: each unit not yet passed by the position (with or without messages) and each
   * of their messages, done or not. What a relay's pause counts.
   */
  get retained(): number {
    this.confirmable();
    return this.units.length + this.heldMessages;
  }

  /** When the oldest unit with a message not done committed; undefined when none is pending. */
  oldestPendingCommitMs(): number | undefined {
    this.confirmable();
    return this.units[0]?.committedAtMs;
  }

  /** When the first message waiting for a retry may go; undefined when none waits. */
  nextRetryAt(now: number): number | undefined {
    if (this.retrying === 0) return undefined;
    let next: number | undefined;
    for (const unit of this.units) {
      for (const entry of unit.entries) {
        if (entry.state === 'waiting' && entry.availableAt > now)
          next = Math.min(next ?? entry.availableAt, entry.availableAt);
      }
    }
    return next;
  }

  private start(entry: Entry, state: 'publishing' | 'parking'): void {
    entry.state = state;
    if (entry.availableAt > 0) {
      entry.availableAt = 0;
      this.retrying -= 1;
    }
  }

  private waitUntil(entry: Entry, availableAt: number): void {
    if (entry.availableAt === 0) this.retrying += 1;
    entry.state = 'waiting';
    entry.availableAt = Math.max(1, availableAt);
  }

  private done(entry: Entry): void {
    if (entry.state === 'done') return;
    entry.state = 'done';
    entry.unit.remaining -= 1;
    this.pending -= 1;
  }

  private advance(position: bigint): void {
    if (position > this.confirmedPosition) this.confirmedPosition = position;
  }
}

function describeOutcome(outcome: PublishOutcome): string {
  if (outcome.status === 'CONFIRMED') return 'CONFIRMED';
  return `${outcome.status}: ${outcome.error.name}: ${outcome.error.message}`;
}
