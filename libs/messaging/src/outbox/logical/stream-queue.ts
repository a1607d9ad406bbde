import { PublishOutcome } from '../../transports/publish-outcome';
import { ClaimedOutboxRow, NewOutboxRow } from '../outbox-row';
import { keyOf } from '../relay-batch';
import { Lsn } from './lsn';

/** One committed transaction as the slot sent it: where its commit ends, when it committed, our messages in it. */
export interface StreamedTransaction {
  readonly endLsn: Lsn;
  readonly commitTimeMs: number;
  readonly rows: readonly NewOutboxRow[];
}

/** Where a message is: waiting (maybe for a retry time), on the wire, being parked, or done with. */
type EntryState = 'waiting' | 'publishing' | 'parking' | 'done';

/** A message of the stream, as the relay publishes it. */
export interface StreamEntry {
  /** The message in the relay's row shape (`id`: its place in the stream, `createdAt`: its commit). */
  readonly row: ClaimedOutboxRow;
  /** `keyOf(row)`: one destination's ordering key. */
  readonly key: string;
  /** Publishes that were not confirmed so far. */
  readonly attempts: number;
  /** Of these, refusals (REJECTED while the broker answered). */
  readonly refusals: number;
}

interface Entry extends StreamEntry {
  state: EntryState;
  refusals: number;
  attempts: number;
  availableAt: number;
  /** Refused in a batch with others: goes alone from now on, so that a refusal is this message's own. */
  solo: boolean;
  readonly transaction: TransactionEntry;
}

interface TransactionEntry {
  readonly endLsn: Lsn;
  readonly commitTimeMs: number;
  /** Messages not done yet. */
  remaining: number;
}

/** What `settle()` asks of the relay. */
export interface SettleResult {
  /** Messages the broker refused `parkAfterRefusals` times: to park (then `parked()`), never to publish again. */
  readonly toPark: StreamEntry[];
  /** The number of messages the broker confirmed. */
  readonly confirmed: number;
}

/** How `settle()` treats messages the broker did not confirm. */
export interface SettlePolicy {
  readonly now: number;
  /** When a message not confirmed `attempts` times (this one included) may go again, ms from now. */
  readonly retryInMs: (attempts: number) => number;
  /**
   * Whether a REJECTED of a message published alone counts as its refusal: true while the broker answers,
   * false while it is down (every publish fails; nothing is the message's fault). A REJECTED in a batch of
   * several never counts: the message goes alone next time.
   */
  readonly countRefusals: boolean;
  /** Refusals after which a message is parked. */
  readonly parkAfterRefusals: number;
}

/**
 * The logical relay's state, without I/O: the transactions the slot sent, in commit order, and what became of
 * each of their messages. It hands out batches that keep each key's order (a message goes only once every
 * earlier one of its key is done, or goes in the same batch before it), takes the broker's answers, and says
 * up to where the log may be confirmed: the end of the last transaction before the first one with a message
 * not done. A message is done once the broker confirmed it or it was parked.
 */
export class StreamQueue {
  private readonly transactions: TransactionEntry[] = [];
  private entries: Entry[] = [];
  /** Entries before this index are done. */
  private head = 0;
  private confirmedLsn: Lsn;
  /** Messages not done yet. */
  private pending = 0;
  /** Messages waiting for a retry time (`availableAt` set): `nextRetryAt` looks only when there are some. */
  private retrying = 0;

  /** `start`: the slot's confirmed position when the stream started. */
  constructor(start: Lsn) {
    this.confirmedLsn = start;
  }

  /** Adds a committed transaction; one without our messages only moves the confirmable position on. */
  add(transaction: StreamedTransaction): void {
    const entry: TransactionEntry = {
      endLsn: transaction.endLsn,
      commitTimeMs: transaction.commitTimeMs,
      remaining: transaction.rows.length,
    };
    if (entry.remaining === 0 && this.transactions.length === 0) {
      this.advance(entry.endLsn);
      return;
    }
    this.transactions.push(entry);
    this.pending += transaction.rows.length;
    transaction.rows.forEach((row, i) => {
      this.entries.push({
        row: {
          ...row,
          id: `${transaction.endLsn.toString()}:${i}`,
          attempts: 0,
          createdAt: new Date(transaction.commitTimeMs),
        },
        key: keyOf(row),
        state: 'waiting',
        refusals: 0,
        attempts: 0,
        availableAt: 0,
        solo: false,
        transaction: entry,
      });
    });
  }

  /**
   * The next messages to publish, at most `max`, in stream order: waiting ones whose time has come and whose
   * key has no earlier message still to go (waiting for a retry, on the wire, being parked). They are marked
   * as publishing. A message once refused in a batch with others goes in a batch of its own.
   */
  take(now: number, max: number): StreamEntry[] {
    const batch: Entry[] = [];
    const blocked = new Set<string>();
    for (let i = this.head; i < this.entries.length && batch.length < max; i++) {
      const entry = this.entries[i];
      if (entry.state === 'done') continue;
      const ready = entry.state === 'waiting' && entry.availableAt <= now && !blocked.has(entry.key);
      if (ready && entry.solo && batch.length === 0) {
        this.start(entry);
        return [entry];
      }
      if (ready && !entry.solo) {
        this.start(entry);
        batch.push(entry);
      } else {
        blocked.add(entry.key);
      }
    }
    return batch;
  }

  /** Records the broker's answers to a batch `take()` handed out (one outcome per message, in order). */
  settle(
    batch: readonly StreamEntry[],
    outcomes: readonly PublishOutcome[],
    policy: SettlePolicy,
  ): SettleResult {
    const toPark: StreamEntry[] = [];
    let confirmed = 0;
    batch.forEach((item, i) => {
      const entry = item as Entry;
      const outcome = outcomes[i];
      if (outcome?.status === 'CONFIRMED') {
        confirmed += 1;
        this.done(entry);
        return;
      }
      entry.attempts += 1;
      // A transport may answer one outcome for a whole request: a refusal in company is nobody's yet.
      if (outcome?.status === 'REJECTED' && batch.length > 1) entry.solo = true;
      else if (outcome?.status === 'REJECTED' && policy.countRefusals) entry.refusals += 1;
      if (entry.refusals >= policy.parkAfterRefusals) {
        entry.state = 'parking';
        toPark.push(entry);
        return;
      }
      this.waitUntil(entry, policy.now + policy.retryInMs(entry.attempts));
    });
    return { toPark, confirmed };
  }

  /** Takes messages that must not be published (their key has parked messages): to park, in order. */
  divert(batch: readonly StreamEntry[]): void {
    for (const entry of batch as Entry[]) entry.state = 'parking';
  }

  /** The messages were parked (written where an operator sees them): done. */
  parked(batch: readonly StreamEntry[]): void {
    for (const entry of batch as Entry[]) this.done(entry);
  }

  /** Parking failed (the database): the messages wait to be parked again from `availableAt`. */
  parkingFailed(batch: readonly StreamEntry[], availableAt: number): void {
    for (const entry of batch as Entry[]) this.waitUntil(entry, availableAt);
  }

  /**
   * The position the slot may be told everything before is done with: the end of the last transaction before
   * the first one with a message not done (or of the last one, when all are done). Never goes back.
   */
  confirmable(): Lsn {
    while (this.transactions.length > 0 && this.transactions[0].remaining === 0) {
      this.advance(this.transactions.shift()!.endLsn);
    }
    return this.confirmedLsn;
  }

  /**
   * The server has sent everything up to `walEnd` (a keepalive) and no transaction is open: when nothing is
   * pending, the slot may move on to there (the log grew with others' writes only).
   */
  idleUpTo(walEnd: Lsn): void {
    this.confirmable();
    if (this.transactions.length === 0) this.advance(walEnd);
  }

  /** Messages not done yet. */
  get size(): number {
    return this.pending;
  }

  /** When the oldest transaction with a message not done committed; undefined when none is pending. */
  oldestPendingCommitMs(): number | undefined {
    this.confirmable();
    return this.transactions[0]?.commitTimeMs;
  }

  /** When the first message waiting for a retry may go; undefined when none waits. */
  nextRetryAt(now: number): number | undefined {
    if (this.retrying === 0) return undefined;
    let next: number | undefined;
    for (let i = this.head; i < this.entries.length; i++) {
      const entry = this.entries[i];
      if (entry.state === 'waiting' && entry.availableAt > now)
        next = Math.min(next ?? entry.availableAt, entry.availableAt);
    }
    return next;
  }

  private start(entry: Entry): void {
    entry.state = 'publishing';
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
    entry.transaction.remaining -= 1;
    this.pending -= 1;
    while (this.head < this.entries.length && this.entries[this.head].state === 'done') this.head += 1;
    if (this.head > 1_024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  private advance(lsn: Lsn): void {
    if (lsn > this.confirmedLsn) this.confirmedLsn = lsn;
  }
}
