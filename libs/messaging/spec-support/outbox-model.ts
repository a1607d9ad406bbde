import { Clock } from '../src/common/clock';
import { FakeClock } from '../src/common/fake-clock';
import { ClaimedOutboxRow, FailedOutboxRow } from '../src/outbox/outbox-row';
import { JournalEntry } from './relay-journal';

/** A row of the model outbox table. Times are the fake clock's epoch milliseconds. */
export interface ModelRow {
  readonly id: string;
  readonly messageId: string;
  readonly destination: string;
  readonly key: string;
  attempts: number;
  availableAt: number;
  lockedBy?: string;
  lockedUntil?: number;
  sentAt?: number;
}

/** The latency of a store call, in fake milliseconds: before the statement runs, and before its answer. */
export type ModelLatency = (operation: string) => number;

/**
 * The outbox table in memory, with the semantics the SQL stores implement (`OutboxStore`): a claim leases
 * claimable rows in id order (free or expired lease, not backing off, none of the claimer's in-flight rows),
 * taking a row only when every earlier pending row of its key is taken with it or in flight; leases end by
 * the clock; mark, fail and release act only on rows the caller still holds. Each call runs atomically at
 * one instant between two latencies, so concurrent calls interleave as statements do. Unit specs only.
 */
export class OutboxModelStore {
  /** Marked in the claim (PostgreSQL) or beside it (MySQL/MariaDB). */
  marksSentInClaim = true;
  readonly rows: ModelRow[] = [];

  constructor(
    /** Where claims, marks and settlements are recorded, beside the broker's publish calls. */
    readonly journal: JournalEntry[] = [],
    private readonly latency: ModelLatency = () => 0,
    /** The world's clock: leases end and latencies pass on it. */
    private readonly clock: Pick<Clock, 'now' | 'sleep'> = new FakeClock(),
  ) {}

  /** Commits `count` rows of `key` (one key per row when omitted); returns them. */
  add(count: number, key?: string, destination = 'orders'): ModelRow[] {
    const added: ModelRow[] = [];
    for (let i = 0; i < count; i++) {
      const id = String(this.rows.length + 1);
      const row: ModelRow = {
        id,
        messageId: `00000000-0000-7000-8000-${id.padStart(12, '0')}`,
        destination,
        key: key ?? `k${id}`,
        attempts: 0,
        availableAt: this.clock.now(),
      };
      this.rows.push(row);
      added.push(row);
    }
    return added;
  }

  /** The row a published message came from. */
  rowOfMessage(messageId: string): ModelRow {
    const row = this.rows.find((r) => r.messageId === messageId);
    if (!row) throw new Error(`No row for message ${messageId}`);
    return row;
  }

  claim(
    limit: number,
    owner: string,
    leaseMs: number,
    inFlight: readonly string[] = [],
    sent: readonly string[] = [],
  ): Promise<ClaimedOutboxRow[]> {
    return this.atomically('claim', () => {
      this.mark(sent, owner);
      const now = this.clock.now();
      const excluded = new Set([...inFlight, ...sent]);
      const taken = new Set<string>();
      // Per key: every earlier pending row is taken in this claim or in flight with the claimer.
      const open = new Map<string, boolean>();
      for (const row of this.rows) {
        if (row.sentAt !== undefined) continue;
        const key = `${row.destination}\u0000${row.key}`;
        if (open.get(key) === false) continue;
        if (excluded.has(row.id)) continue;
        if (taken.size < limit && this.claimable(row, now)) {
          taken.add(row.id);
          open.set(key, true);
        } else {
          open.set(key, false); // a gap: the key's later rows wait
        }
      }
      const claimed = this.rows.filter((row) => taken.has(row.id));
      for (const row of claimed) {
        row.lockedBy = owner;
        row.lockedUntil = now + leaseMs;
      }
      this.journal.push({ kind: 'claimed', owner, at: now, ids: [...taken] });
      return claimed.map((row) => this.asClaimed(row));
    });
  }

  markSent(ids: readonly string[], owner: string): Promise<void> {
    return this.atomically('markSent', () => this.mark(ids, owner));
  }

  markFailed(failed: readonly FailedOutboxRow[], owner: string): Promise<void> {
    return this.atomically('markFailed', () => {
      const now = this.clock.now();
      this.settled(
        failed.map((f) => f.id),
        owner,
      );
      for (const f of failed) {
        const row = this.held(f.id, owner);
        if (!row) continue;
        row.attempts += 1;
        row.availableAt = now + Math.round(f.retryInMs);
        row.lockedBy = row.lockedUntil = undefined;
      }
    });
  }

  releaseRows(ids: readonly string[], owner: string): Promise<void> {
    return this.atomically('releaseRows', () => {
      this.settled(ids, owner);
      for (const id of ids) {
        const row = this.held(id, owner);
        if (row) row.lockedBy = row.lockedUntil = undefined;
      }
    });
  }

  release(owner: string): Promise<number> {
    return this.atomically('release', () => {
      const mine = this.rows.filter((r) => r.sentAt === undefined && r.lockedBy === owner);
      this.settled(
        mine.map((r) => r.id),
        owner,
      );
      mine.forEach((row) => (row.lockedBy = row.lockedUntil = undefined));
      return mine.length;
    });
  }

  /** The model has no scheduled messages. */
  moveDueScheduled(): Promise<{ moved: number; nextDueInMs: number | undefined }> {
    return Promise.resolve({ moved: 0, nextDueInMs: undefined });
  }

  nextHeldRowFreeAt(): Promise<Date | undefined> {
    return this.atomically('nextHeldRowFreeAt', () => {
      const now = this.clock.now();
      const times = this.rows
        .filter((r) => r.sentAt === undefined)
        .map((r) => (r.lockedUntil !== undefined && r.lockedUntil > now ? r.lockedUntil : r.availableAt))
        .filter((at) => at > now);
      return times.length === 0 ? undefined : new Date(Math.min(...times));
    });
  }

  /** Rows not yet sent. */
  pending(): ModelRow[] {
    return this.rows.filter((r) => r.sentAt === undefined);
  }

  private mark(ids: readonly string[], owner: string): void {
    if (ids.length === 0) return;
    this.settled(ids, owner);
    const at = this.clock.now();
    const marked = ids.map((id) => this.held(id, owner)).filter((row) => row !== undefined);
    for (const row of marked) {
      row.sentAt = at;
      row.lockedBy = row.lockedUntil = undefined;
    }
    if (marked.length > 0) this.journal.push({ kind: 'marked', owner, at, ids: marked.map((r) => r.id) });
  }

  private settled(ids: readonly string[], owner: string): void {
    if (ids.length > 0) this.journal.push({ kind: 'settled', owner, at: this.clock.now(), ids: [...ids] });
  }

  /** The row, if `owner` holds it and it is not sent (an expired lease is still held until taken over). */
  private held(id: string, owner: string): ModelRow | undefined {
    const row = this.rows.find((r) => r.id === id);
    return row && row.sentAt === undefined && row.lockedBy === owner ? row : undefined;
  }

  private claimable(row: ModelRow, now: number): boolean {
    return row.availableAt <= now && (row.lockedUntil === undefined || row.lockedUntil <= now);
  }

  private asClaimed(row: ModelRow): ClaimedOutboxRow {
    return {
      id: row.id,
      messageId: row.messageId,
      destination: row.destination,
      type: 'OrderPlaced',
      key: row.key,
      headers: {},
      payloadJson: '{}',
      occurredAt: new Date(0),
      createdAt: new Date(0),
      attempts: row.attempts,
    };
  }

  private async atomically<T>(operation: string, work: () => T): Promise<T> {
    await this.sleep(this.latency(operation));
    const result = work();
    await this.sleep(this.latency(operation));
    return result;
  }

  /** Resolves after `ms` on the clock; on the next microtask when 0. */
  private sleep(ms: number): Promise<void> {
    return ms > 0 ? this.clock.sleep(ms) : Promise.resolve();
  }
}
