import { QueryRunner } from 'typeorm';
import { OutboxBacklog, OutboxFigures } from '../observability/observed-sources';
import { MessagingTables } from '../tables/messaging-tables';
import { ClaimedOutboxRow, FailedOutboxRow, NewOutboxRow } from './outbox-row';
import { Schedule } from './schedule';

export type { OutboxBacklog } from '../observability/observed-sources';

/**
 * The rows a claim leased, in id order. `windowFull`: the claim's window (the rows it picked before the order
 * check) was full, so more claimable rows may wait past it; false when it picked every row claimable then.
 * Left out, the relay takes a claim that returned `limit` rows as full.
 */
export type ClaimedRows = ClaimedOutboxRow[] & { readonly windowFull?: boolean };

/** `rows` as a claim's answer (`windowFull` not enumerable: the rows compare and print as a plain array). */
export function claimedRows(rows: ClaimedOutboxRow[], windowFull: boolean): ClaimedRows {
  return Object.defineProperty(rows, 'windowFull', { value: windowFull, enumerable: false });
}

/** How a store treats rows the broker confirmed. */
export interface OutboxStoreSettings {
  /**
   * Keep them, marked sent, for the retention job to delete later (`retention.sentRetentionMs` above 0, the
   * default); or delete them at once (`sentRetentionMs: 0`), which spares the database the row's second
   * version and its index entries.
   */
  readonly keepSent: boolean;
  /**
   * Insert rows marked sent: another program publishes them from the database's log (relay mode `external`,
   * e.g. Debezium), so no relay of the library claims them, and retention deletes them after
   * `retention.sentRetentionMs` from their insert. Default false.
   */
  readonly sentOnInsert?: boolean;
}

/**
 * The outbox table in one database's SQL: every statement the library sends for the outbox, its purge and
 * its health and metrics queries. One implementation per database (`database/postgres`, `database/mysql`),
 * chosen from the DataSource's type at startup; the relay, the services and the jobs only see this.
 */
export abstract class OutboxStore implements OutboxFigures {
  abstract readonly tables: MessagingTables;
  /**
   * The channel relays of other instances LISTEN on, where the database has LISTEN/NOTIFY (PostgreSQL);
   * undefined elsewhere (the `relay.notify` option is then refused at startup).
   */
  abstract readonly notifyChannel: string | undefined;
  /** The migration that creates the tables and the exported list that holds it, for the startup error. */
  abstract readonly migration: { readonly name: string; readonly list: string };

  /** Throws `UnsupportedDatabaseError` when the server cannot run the library's SQL (a version too old). */
  abstract checkServer(): Promise<void>;

  /** True when the outbox table exists (the migration ran). */
  abstract tableExists(): Promise<boolean>;

  /** Inserts rows in the caller's transaction. */
  abstract insert(queryRunner: QueryRunner, rows: readonly NewOutboxRow[]): Promise<void>;

  /**
   * Inserts a scheduled message in the caller's transaction, into the table of scheduled messages (not the
   * outbox): due at `schedule.deliverAt`, or `schedule.delayMs` after the database's clock at the insert.
   * False, and nothing written, when the outbox or the table of scheduled messages holds its message id
   * already (neither refusal aborts the caller's transaction).
   */
  abstract insertScheduled(queryRunner: QueryRunner, row: NewOutboxRow, schedule: Schedule): Promise<boolean>;

  /**
   * Whether the outbox holds `messageId`, in the caller's transaction: `'pending'` (not yet confirmed by the
   * broker), `'sent'` (confirmed, the row kept), undefined (no row).
   */
  abstract outboxStateOf(
    queryRunner: QueryRunner,
    messageId: string,
  ): Promise<'pending' | 'sent' | undefined>;

  /**
   * Deletes a scheduled message not yet moved into the outbox, in the caller's transaction; false when there
   * is none of that id (unknown, cancelled already, or due and moved: then it is published, or about to be).
   * A move under way holds the row: the delete waits for it and then finds nothing.
   */
  abstract cancelScheduled(queryRunner: QueryRunner, messageId: string): Promise<boolean>;

  /**
   * Moves up to `limit` scheduled messages that are due by the database's clock into the outbox, in due order
   * (then insertion order), in one transaction; rows another relay is moving are skipped. Returns how many it
   * moved and, by the database's clock, the milliseconds until the first one not yet due (undefined: none).
   * `dropped`: how many of those moved the outbox did not take, their message id being there already (an
   * unscheduled `add()` took it while they waited); undefined or 0 when none.
   */
  abstract moveDueScheduled(
    limit: number,
  ): Promise<{ moved: number; nextDueInMs: number | undefined; dropped?: number }>;

  /** True when the table of scheduled messages exists (its migration ran). */
  abstract scheduledTableExists(): Promise<boolean>;

  /** The migration that creates the table of scheduled messages, for the startup error. */
  abstract readonly scheduledMigration: { readonly name: string; readonly list: string };

  /** Scheduled messages waiting, and milliseconds until the first is due (metrics). */
  abstract scheduledFigures(): Promise<{ scheduled: number; nextDueInMs: number | undefined }>;

  /** Wakes relays listening on `notifyChannel` when the caller's transaction commits. */
  abstract notify(queryRunner: QueryRunner): Promise<void>;

  /**
   * Whether the relay hands the batch before to `claim(…, sent)` (marked in the claim's statement or
   * transaction), or marks it with `markSent` on another connection while the claim runs. PostgreSQL: in the
   * claim (one statement either way). MySQL/MariaDB override it: their claim is a transaction of several round
   * trips, and marking in it lengthens the relay's critical path (measured: relay → Kafka 8.3k → 11.0k msg/s).
   */
  readonly marksSentInClaim: boolean = true;

  /**
   * Claims up to `limit` rows for `owner` for `leaseMs`, in id order, keeping each key's order: rows locked
   * by a concurrent claim are skipped, not waited for; a row is taken only if every earlier pending row of
   * its key is taken in the same claim (or is one of `inFlight`: this owner's rows on the wire right now,
   * never claimed again, whatever their lease); expired leases count as free (a crashed instance's rows are
   * taken over). Rows of a key whose first pending row cannot go (backing off, leased elsewhere) do not
   * keep the claim from rows of other keys behind them.
   *
   * `sent` are rows of an earlier batch the broker confirmed: they are marked sent (or deleted) in the same
   * statement (PostgreSQL) or transaction (MySQL/MariaDB), exactly as `markSent(sent, owner)` would, so that a relay
   * under load commits once per batch; they are never claimed again, and count as in flight for the order.
   */
  abstract claim(
    limit: number,
    owner: string,
    leaseMs: number,
    inFlight?: readonly string[],
    sent?: readonly string[],
  ): Promise<ClaimedRows>;

  /**
   * Marks confirmed rows sent and releases them (or deletes them, without `keepSent`): only rows `owner`
   * still holds. A row whose lease ran out and that another instance took over is that instance's to mark;
   * it publishes the row again (a duplicate, never a loss).
   */
  abstract markSent(ids: readonly string[], owner: string): Promise<void>;

  /**
   * Releases rows whose publish failed and holds each back for its retry delay: only rows `owner` still
   * holds, so that a late answer never releases, or delays, a row another instance has in flight.
   */
  abstract markFailed(rows: readonly FailedOutboxRow[], owner: string): Promise<void>;

  /** Releases some of `owner`'s rows without counting an attempt (claimed, then held back unpublished). */
  abstract releaseRows(ids: readonly string[], owner: string): Promise<void>;

  /** Releases every unsent row `owner` holds (shutdown); returns how many. */
  abstract release(owner: string): Promise<number>;

  /**
   * Deletes up to `batchSize` rows sent more than `olderThanMs` ago, one instance at a time (the others
   * skip the round). Returns the rows deleted.
   */
  abstract purgeSent(olderThanMs: number, batchSize: number): Promise<number>;

  /** When the first pending row held by a lease or a backoff becomes claimable; undefined when none is held. */
  abstract nextHeldRowFreeAt(): Promise<Date | undefined>;

  /** Pending rows and the age of the oldest, per destination (health and metrics). */
  abstract backlog(): Promise<OutboxBacklog[]>;

  /** The database's estimate of the rows in the outbox and inbox tables (metrics), by table name. */
  abstract tableRowEstimates(): Promise<Array<{ table: string; rows: number }>>;
}

/** Orders bigint ids given as text. */
export function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
