import { createHash } from 'node:crypto';
import { DataSource, QueryRunner } from 'typeorm';
import { CreateMessagingTables1764547200000 } from '../../migrations/create-messaging-tables.migration';
import { CreateScheduledMessages1765152000000 } from '../../migrations/create-scheduled-messages.migration';
import { beyondExact, Schedule, SCHEDULED_EXACT_COUNT_LIMIT } from '../../outbox/schedule';
import { ClaimedOutboxRow, FailedOutboxRow, NewOutboxRow } from '../../outbox/outbox-row';
import {
  claimedRows,
  ClaimedRows,
  compareIds,
  OutboxBacklog,
  OutboxStore,
  OutboxStoreSettings,
} from '../../outbox/outbox-store';
import { isStarved } from '../claim-window';
import { MessagingTables } from '../../tables/messaging-tables';
import { postgresTables } from '../../tables/postgres-tables';

/** What one window of a claim did: the rows it picked, the last of them, and those it leased. */
interface ClaimedWindow {
  /** Rows the window picked (claimable, in id order), before the order check dropped some. */
  readonly picked: number;
  /** The highest id picked (bigint as text); undefined when nothing was. */
  readonly lastPicked: string | undefined;
  /** The rows leased, in id order. */
  readonly rows: ClaimedOutboxRow[];
}

/**
 * A timestamp the relay reads, as milliseconds since the epoch, truncated to the millisecond as a `Date` from
 * the driver's text would be. Not left to `pg`'s parser of `timestamptz`: an application may have replaced it
 * (process-wide) to read text, and the relay then got strings instead of dates and failed every round. It
 * also spares the relay's one thread two date parses per row (about 0.7 µs each here). `round` makes it exact
 * whether `extract` answers numeric (PostgreSQL 14+) or double precision.
 */
const EPOCH_MS = (column: string) =>
  `round(extract(epoch from date_trunc('milliseconds', ${column})) * 1000)::float8`;

/** A picked row: claimed (`kept`), or left out by the order check (then without its payload). */
type WindowRecord = Omit<ClaimedRecord, 'payload'> & { kept: boolean; payload: string | null };

interface ClaimedRecord {
  id: string;
  message_id: string;
  destination: string;
  type: string;
  key: string;
  headers: Record<string, string>;
  payload: string;
  /** Milliseconds since the epoch (see `EPOCH_MS`). */
  occurred_ms: number;
  created_ms: number;
  attempts: number;
}

/**
 * The outbox on PostgreSQL: a claim is one statement (`FOR UPDATE SKIP LOCKED` in a CTE, `RETURNING`),
 * partial indexes cover the pending rows only, the purge takes an advisory lock, other instances' relays
 * can be woken with NOTIFY.
 */
export class PostgresOutboxStore extends OutboxStore {
  readonly tables: MessagingTables;
  /** The LISTEN/NOTIFY channel of this outbox table. */
  readonly notifyChannel: string;
  readonly migration = { name: CreateMessagingTables1764547200000.name, list: 'MessagingMigrations' };
  readonly scheduledMigration = {
    name: CreateScheduledMessages1765152000000.name,
    list: 'MessagingMigrations',
  };

  constructor(
    private readonly dataSource: DataSource,
    private readonly settings: OutboxStoreSettings = { keepSent: true },
  ) {
    super();
    this.tables = postgresTables(dataSource);
    this.notifyChannel = notifyChannelName(this.tables.schema ?? 'default');
  }

  /** The statement that settles confirmed rows `ids` of `owner` (parameter placeholders): mark or delete. */
  private settleSent(ids: string, owner: string): string {
    const t = this.tables.outbox;
    return this.settings.keepSent
      ? `update ${t} set sent_at = now(), locked_by = null, locked_until = null
         where id = any(${ids}::bigint[]) and locked_by = ${owner}`
      : `delete from ${t} where id = any(${ids}::bigint[]) and locked_by = ${owner}`;
  }

  /** Every PostgreSQL version TypeORM connects to has what the library uses. */
  async checkServer(): Promise<void> {}

  async insert(queryRunner: QueryRunner, rows: readonly NewOutboxRow[]): Promise<void> {
    if (rows.length === 0) return;
    // relay.mode 'external': the row goes out through the log (Debezium), never through a claim.
    const [sentColumn, sentValue] = this.settings.sentOnInsert ? [', sent_at', ', now()'] : ['', ''];
    const params: unknown[] = [];
    const values = rows.map((row) => {
      const at = params.length;
      params.push(...rowParams(row));
      return `($${at + 1}, $${at + 2}, $${at + 3}, $${at + 4}, $${at + 5}::jsonb, $${at + 6}::jsonb, $${at + 7}${sentValue})`;
    });
    await queryRunner.query(
      `insert into ${this.tables.outbox} (message_id, destination, type, key, headers, payload, occurred_at${sentColumn}) values ${values.join(', ')}`,
      params,
    );
  }

  /** One statement: an id the outbox or the scheduled messages hold already is not inserted (no error raised). */
  async insertScheduled(queryRunner: QueryRunner, row: NewOutboxRow, schedule: Schedule): Promise<boolean> {
    const inserted = (await queryRunner.query(
      `insert into ${this.tables.scheduled}
         (message_id, destination, type, key, headers, payload, occurred_at, deliver_at)
       select $1::uuid, $2, $3, $4, $5::jsonb, $6::jsonb, $7::timestamptz,
              coalesce($8::timestamptz, now() + $9::bigint * interval '1 millisecond')
       where not exists (select 1 from ${this.tables.outbox} where message_id = $1::uuid)
       on conflict (message_id) do nothing
       returning id`,
      [
        ...rowParams(row),
        'deliverAt' in schedule ? schedule.deliverAt : null,
        'delayMs' in schedule ? schedule.delayMs : null,
      ],
    )) as unknown[];
    return inserted.length > 0;
  }

  async outboxStateOf(queryRunner: QueryRunner, messageId: string): Promise<'pending' | 'sent' | undefined> {
    const rows = (await queryRunner.query(
      `select sent_at is not null as sent from ${this.tables.outbox} where message_id = $1`,
      [messageId],
    )) as Array<{ sent: boolean }>;
    if (rows.length === 0) return undefined;
    return rows[0].sent ? 'sent' : 'pending';
  }

  async cancelScheduled(queryRunner: QueryRunner, messageId: string): Promise<boolean> {
    // TypeORM answers a DELETE with [rows, rowCount].
    const result = (await queryRunner.query(`delete from ${this.tables.scheduled} where message_id = $1`, [
      messageId,
    ])) as [unknown[], number];
    return result[1] > 0;
  }

  /**
   * One statement: the due rows are locked (`SKIP LOCKED`: another relay's move, a cancel in flight), deleted
   * and inserted into the outbox in due order, so that each gets an outbox id behind every row already there.
   * An id the outbox holds already (the same message id added unscheduled) is not inserted twice.
   */
  async moveDueScheduled(
    limit: number,
  ): Promise<{ moved: number; nextDueInMs: number | undefined; dropped: number }> {
    const s = this.tables.scheduled;
    const [{ moved, inserted, next_due_ms }] = await this.dataSource.query<
      Array<{ moved: number; inserted: number; next_due_ms: number | null }>
    >(
      `with due as (
         delete from ${s} where id in (
           select id from ${s} where deliver_at <= now() order by deliver_at, id limit $1 for update skip locked)
         returning id, message_id, destination, type, key, headers, payload, occurred_at, deliver_at
       ), moved as (
         insert into ${this.tables.outbox} (message_id, destination, type, key, headers, payload, occurred_at)
         select message_id, destination, type, key, headers, payload, occurred_at from due
         order by deliver_at, id
         on conflict (message_id) do nothing
         returning id
       )
       select (select count(*) from due)::int as moved,
              (select count(*) from moved)::int as inserted,
              (select ceil(extract(epoch from (min(deliver_at) - now())) * 1000)::float8
                 from ${s} where deliver_at > now()) as next_due_ms`,
      [limit],
    );
    return {
      moved: Number(moved),
      nextDueInMs: next_due_ms === null ? undefined : Number(next_due_ms),
      dropped: Number(moved) - Number(inserted),
    };
  }

  async scheduledTableExists(): Promise<boolean> {
    const [{ found }] = await this.dataSource.query<Array<{ found: string | null }>>(
      'select to_regclass($1) as found',
      [this.tables.scheduled],
    );
    return found !== null;
  }

  /**
   * Counted up to `SCHEDULED_EXACT_COUNT_LIMIT` (an index-only read of at most that many entries), the planner's
   * estimate above; the next due time from the `(deliver_at, id)` index's first entry.
   */
  async scheduledFigures(): Promise<{ scheduled: number; nextDueInMs: number | undefined }> {
    const s = this.tables.scheduled;
    const [{ counted, estimate, next_due_ms }] = await this.dataSource.query<
      Array<{ counted: number; estimate: number | null; next_due_ms: number | null }>
    >(
      `select (select count(*) from (select 1 from ${s} limit $1) c)::float8 as counted,
              (select reltuples from pg_class where oid = to_regclass($2))::float8 as estimate,
              (select extract(epoch from (min(deliver_at) - now())) * 1000 from ${s})::float8 as next_due_ms`,
      [SCHEDULED_EXACT_COUNT_LIMIT + 1, s],
    );
    return {
      scheduled: beyondExact(Number(counted), estimate === null ? undefined : Number(estimate)),
      nextDueInMs: next_due_ms === null ? undefined : Number(next_due_ms),
    };
  }

  /** NOTIFY is transactional: it is delivered when the caller's transaction commits. */
  async notify(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('select pg_notify($1, $2)', [this.notifyChannel, '']);
  }

  /**
   * One statement, and a second when the first was starved (see `claimWindow`): the relay's claim under
   * load is one round trip, however the backlog looks.
   */
  async claim(
    limit: number,
    owner: string,
    leaseMs: number,
    inFlight: readonly string[] = [],
    sent: readonly string[] = [],
  ): Promise<ClaimedRows> {
    // The statement's CTEs all see the table as it was before it: the rows marked sent (or deleted) here
    // still look pending to the order check, so they count as in flight.
    const excluded = sent.length === 0 ? inFlight : [...inFlight, ...sent];
    const first = await this.claimWindow({ limit, owner, leaseMs, excluded, sent });
    if (!isStarved(first.picked, first.rows.length, limit) || first.lastPicked === undefined) {
      return claimedRows(first.rows, first.picked >= limit);
    }
    const more = await this.claimWindow({
      limit: limit - first.rows.length,
      owner,
      leaseMs,
      excluded: [...excluded, ...first.rows.map((row) => row.id)],
      sent: [],
      after: first.lastPicked,
    });
    return claimedRows([...first.rows, ...more.rows], more.picked >= limit - first.rows.length);
  }

  /**
   * Picks the first `limit` claimable rows in id order (`FOR UPDATE SKIP LOCKED`), then keeps each key's
   * order: per key, one probe of the (destination, key, id) index finds the first pending row left out of
   * the claim (its `gap`), and only the key's rows before it are leased. (Checking each picked row against
   * every earlier row instead cost time quadratic in the backlog: seconds for a few hundred pending rows on
   * a table without statistics yet, minutes for a few thousand.)
   *
   * With `after`, the window continues past an earlier one and skips the rows of keys whose first pending
   * row can go neither now nor with this owner (backing off after a failure, or leased by another
   * instance): one more probe per key (memoized), paid only when a window was starved by such keys.
   */
  private async claimWindow(window: {
    limit: number;
    owner: string;
    leaseMs: number;
    excluded: readonly string[];
    sent: readonly string[];
    after?: string;
  }): Promise<ClaimedWindow> {
    const t = this.tables.outbox;
    const claimable = (r: string) =>
      `${r}.available_at <= now() and (${r}.locked_until is null or ${r}.locked_until <= now())`;
    const pastBlockedKeys =
      window.after === undefined
        ? ''
        : `cross join lateral (
             select ${claimable('h')} or h.locked_by = $2 as free from ${t} h
             where h.sent_at is null and h.destination = p.destination and h.key = p.key
             order by h.id limit 1
           ) head`;
    const afterWindow = window.after === undefined ? '' : 'and p.id > $6 and head.free';
    // Every picked row is returned, `kept` or not (a row the order check drops is "updated" to what it was:
    // that is how the statement tells how full its window was without a second pass over the result).
    const records = await this.dataSource.query<[WindowRecord[], number]>(
      `with sent as (
         ${this.settleSent('$5', '$2')}
       ), picked as (
         select p.id, p.destination, p.key from ${t} p ${pastBlockedKeys}
         where p.sent_at is null and ${claimable('p')} and p.id <> all ($4::bigint[]) ${afterWindow}
         order by p.id
         limit $1
         for update of p skip locked
       ), gaps as materialized (
         select k.destination, k.key, (
             select b.id from ${t} b
             where b.sent_at is null and b.destination = k.destination and b.key = k.key
               and b.id <> all (k.ids) and b.id <> all ($4::bigint[])
             order by b.id
             limit 1
           ) as gap
         from (select destination, key, array_agg(id) as ids from picked group by destination, key) k
       ), kept as (
         select p.id, g.gap is null or p.id < g.gap as kept
         from picked p join gaps g on g.destination = p.destination and g.key = p.key
       )
       update ${t} o
       set locked_by = case when k.kept then $2 else o.locked_by end,
           locked_until = case when k.kept then now() + $3 * interval '1 millisecond' else o.locked_until end
       from kept k
       where o.id = k.id
       returning o.id, k.kept, o.message_id, o.destination, o.type, o.key, o.headers,
                 case when k.kept then o.payload::text end as payload, ${EPOCH_MS('o.occurred_at')} as occurred_ms,
                 ${EPOCH_MS('o.created_at')} as created_ms, o.attempts`,
      [
        window.limit,
        window.owner,
        window.leaseMs,
        window.excluded,
        window.sent,
        ...(window.after === undefined ? [] : [window.after]),
      ],
    );
    // TypeORM answers an UPDATE with [rows, rowCount].
    const [picked] = records;
    const ids = picked.map((r) => String(r.id));
    return {
      picked: picked.length,
      lastPicked: ids.length === 0 ? undefined : ids.reduce((a, b) => (compareIds(a, b) < 0 ? b : a)),
      rows: picked
        .filter((r) => r.kept)
        .map((r) => ({
          id: String(r.id),
          messageId: r.message_id,
          destination: r.destination,
          type: r.type,
          key: r.key,
          headers: r.headers,
          payloadJson: r.payload ?? '',
          occurredAt: new Date(r.occurred_ms),
          createdAt: new Date(r.created_ms),
          attempts: r.attempts,
        }))
        .sort((a, b) => compareIds(a.id, b.id)),
    };
  }

  async markSent(ids: readonly string[], owner: string): Promise<void> {
    if (ids.length === 0) return;
    await this.dataSource.query(this.settleSent('$1', '$2'), [ids, owner]);
  }

  async markFailed(rows: readonly FailedOutboxRow[], owner: string): Promise<void> {
    if (rows.length === 0) return;
    await this.dataSource.query(
      `update ${this.tables.outbox} o
       set attempts = o.attempts + 1, last_error = f.error, locked_by = null, locked_until = null,
           available_at = now() + f.delay * interval '1 millisecond'
       from unnest($1::bigint[], $2::text[], $3::integer[]) as f(id, error, delay)
       where o.id = f.id and o.sent_at is null and o.locked_by = $4`,
      [rows.map((r) => r.id), rows.map((r) => r.error), rows.map((r) => Math.round(r.retryInMs)), owner],
    );
  }

  async releaseRows(ids: readonly string[], owner: string): Promise<void> {
    if (ids.length === 0) return;
    await this.dataSource.query(
      `update ${this.tables.outbox} set locked_by = null, locked_until = null
       where id = any($1::bigint[]) and locked_by = $2 and sent_at is null`,
      [ids, owner],
    );
  }

  async release(owner: string): Promise<number> {
    const result = await this.dataSource.query<[unknown[], number]>(
      `update ${this.tables.outbox} set locked_by = null, locked_until = null
       where locked_by = $1 and sent_at is null`,
      [owner],
    );
    return result[1];
  }

  /** Only one instance at a time: the others skip the round (transaction-scoped advisory lock). */
  async purgeSent(olderThanMs: number, batchSize: number): Promise<number> {
    const t = this.tables.outbox;
    return this.dataSource.transaction(async (manager) => {
      const [{ locked }] = await manager.query<Array<{ locked: boolean }>>(
        'select pg_try_advisory_xact_lock(hashtext($1)) as locked',
        [`messaging-outbox-retention:${t}`],
      );
      if (!locked) return 0;
      const result = await manager.query<[unknown[], number]>(
        `delete from ${t} where id in (
           select id from ${t} where sent_at is not null and sent_at < now() - $1 * interval '1 millisecond'
           order by sent_at limit $2)`,
        [olderThanMs, batchSize],
      );
      return result[1];
    });
  }

  async nextHeldRowFreeAt(): Promise<Date | undefined> {
    const [{ free_ms }] = await this.dataSource.query<Array<{ free_ms: number | null }>>(
      `select ${EPOCH_MS('min(case when locked_until > now() then locked_until else available_at end)')} as free_ms
       from ${this.tables.outbox}
       where sent_at is null and (locked_until > now() or available_at > now())`,
    );
    return free_ms === null ? undefined : new Date(free_ms);
  }

  async backlog(): Promise<OutboxBacklog[]> {
    const rows = await this.dataSource.query<
      Array<{ destination: string; pending: string; oldest_age_ms: string }>
    >(
      `select destination, count(*) as pending,
              coalesce(extract(epoch from now() - min(created_at)) * 1000, 0)::bigint as oldest_age_ms
       from ${this.tables.outbox} where sent_at is null group by destination`,
    );
    return rows.map((r) => ({
      destination: r.destination,
      pending: Number(r.pending),
      oldestAgeMs: Number(r.oldest_age_ms),
    }));
  }

  async tableExists(): Promise<boolean> {
    const [{ found }] = await this.dataSource.query<Array<{ found: string | null }>>(
      'select to_regclass($1) as found',
      [this.tables.outbox],
    );
    return found !== null;
  }

  /** `reltuples`, which ANALYZE and autovacuum keep up to date (-1 before the first). */
  async tableRowEstimates(): Promise<Array<{ table: string; rows: number }>> {
    const rows = await this.dataSource.query<Array<{ name: string; estimate: number }>>(
      `select c.relname as name, greatest(c.reltuples, 0)::float8 as estimate from pg_class c
       where c.oid in (to_regclass($1), to_regclass($2))`,
      [this.tables.outbox, this.tables.inbox],
    );
    return rows.map((row) => ({ table: row.name, rows: Number(row.estimate) }));
  }
}

/** PostgreSQL's longest name (NAMEDATALEN - 1): pg_notify() refuses a longer channel. */
const MAX_CHANNEL_LENGTH = 63;

/**
 * The channel of a schema's outbox: readable, and at most 63 characters (a schema name may have 63 itself),
 * shortened with a hash of the schema name when it would be longer.
 */
function notifyChannelName(schema: string): string {
  const channel = `messaging_outbox_${schema}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (channel.length <= MAX_CHANNEL_LENGTH) return channel;
  const hash = createHash('sha256').update(schema).digest('hex').slice(0, 8);
  return `${channel.slice(0, MAX_CHANNEL_LENGTH - hash.length - 1)}_${hash}`;
}

/** A new row's values for the columns message_id … occurred_at, in that order (the outbox's and the scheduled table's). */
function rowParams(row: NewOutboxRow): unknown[] {
  return [
    row.messageId,
    row.destination,
    row.type,
    row.key,
    JSON.stringify(row.headers),
    row.payloadJson,
    row.occurredAt,
  ];
}
