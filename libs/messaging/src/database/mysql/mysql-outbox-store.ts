import { DataSource, QueryRunner } from 'typeorm';
import { UnsupportedDatabaseError } from '../../errors/unsupported-database.error';
import { CreateMysqlMessagingTables1764806400000 } from '../../migrations/create-mysql-messaging-tables.migration';
import { CreateMysqlScheduledMessages1765152000000 } from '../../migrations/create-mysql-scheduled-messages.migration';
import { beyondExact, Schedule, SCHEDULED_EXACT_COUNT_LIMIT } from '../../outbox/schedule';
import { FailedOutboxRow, NewOutboxRow } from '../../outbox/outbox-row';
import { ClaimedRows, OutboxBacklog, OutboxStore, OutboxStoreSettings } from '../../outbox/outbox-store';
import { MessagingTables } from '../../tables/messaging-tables';
import { claimMysqlRows } from './mysql-claim';
import { mysqlServerProblem } from './mysql-server-version';
import {
  affectedRows,
  idList,
  isDuplicateKey,
  inReadCommitted,
  parseUtc,
  readCommitted,
  UTC_ISO,
  utcDatetime,
  withConnection,
} from './mysql-sql';
import { mysqlTables } from '../../tables/mysql-tables';

/**
 * The outbox on MySQL 8.0.4+ and MariaDB 10.6+. What differs from PostgreSQL: a claim is a READ COMMITTED
 * transaction of three statements (no `UPDATE … RETURNING`), indexes lead with `sent_at` instead of being
 * partial, times are UTC `datetime(6)` written and read as text, the purge takes a named lock
 * (`GET_LOCK`), and there is no NOTIFY (other instances' rows reach this relay on its safety poll).
 */
export class MysqlOutboxStore extends OutboxStore {
  readonly tables: MessagingTables;
  readonly notifyChannel = undefined;
  /** The relay marks the batch before sent beside the claim, not in its transaction (see the base class). */
  override readonly marksSentInClaim = false;
  readonly migration = {
    name: CreateMysqlMessagingTables1764806400000.name,
    list: 'MysqlMessagingMigrations',
  };
  readonly scheduledMigration = {
    name: CreateMysqlScheduledMessages1765152000000.name,
    list: 'MysqlMessagingMigrations',
  };

  constructor(
    private readonly dataSource: DataSource,
    private readonly settings: OutboxStoreSettings = { keepSent: true },
  ) {
    super();
    this.tables = mysqlTables(dataSource);
  }

  async checkServer(): Promise<void> {
    const [{ version }] = await this.dataSource.query<Array<{ version: string }>>(
      'select version() as version',
    );
    const problem = mysqlServerProblem(version);
    if (problem) throw new UnsupportedDatabaseError(this.dataSource.options.type, problem);
  }

  async tableExists(): Promise<boolean> {
    const [{ found }] = await this.dataSource.query<Array<{ found: number | string }>>(
      `select count(*) as found from information_schema.tables
       where table_schema = database() and table_name = 'messaging_outbox'`,
    );
    return Number(found) > 0;
  }

  async insert(queryRunner: QueryRunner, rows: readonly NewOutboxRow[]): Promise<void> {
    if (rows.length === 0) return;
    const params = rows.flatMap(rowParams);
    // relay.mode 'external': the row goes out through the log (Debezium), never through a claim.
    const [sentColumn, sentValue] = this.settings.sentOnInsert
      ? [', sent_at', ', utc_timestamp(6)']
      : ['', ''];
    const values = rows
      .map(() => `(?, ?, ?, ?, ?, ?, ?, utc_timestamp(6), utc_timestamp(6)${sentValue})`)
      .join(', ');
    await queryRunner.query(
      `insert into ${this.tables.outbox}
         (message_id, destination, type, \`key\`, headers, payload, occurred_at, created_at, available_at${sentColumn})
       values ${values}`,
      params,
    );
  }

  /**
   * An id the outbox holds is not inserted: a plain read first (an `insert … select … where not exists` would
   * lock the gap of the outbox's id index, the end where every new UUIDv7 goes, until the writer commits); one
   * the scheduled messages hold is refused by their unique index.
   */
  async insertScheduled(queryRunner: QueryRunner, row: NewOutboxRow, schedule: Schedule): Promise<boolean> {
    if ((await this.outboxStateOf(queryRunner, row.messageId)) !== undefined) return false;
    const deliverAt = 'deliverAt' in schedule ? utcDatetime(schedule.deliverAt) : null;
    const delayUs = 'delayMs' in schedule ? schedule.delayMs * 1000 : 0;
    try {
      await queryRunner.query(
        `insert into ${this.tables.scheduled}
           (message_id, destination, type, \`key\`, headers, payload, occurred_at, created_at, deliver_at)
         values (?, ?, ?, ?, ?, ?, ?, utc_timestamp(6),
                 coalesce(cast(? as datetime(6)), utc_timestamp(6) + interval ? microsecond))`,
        [...rowParams(row), deliverAt, delayUs],
      );
      return true;
    } catch (error) {
      // MySQL and MariaDB roll back only the refused statement, not the caller's transaction.
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  async outboxStateOf(queryRunner: QueryRunner, messageId: string): Promise<'pending' | 'sent' | undefined> {
    const rows = (await queryRunner.query(
      `select sent_at is not null as sent from ${this.tables.outbox} where message_id = ?`,
      [messageId.toLowerCase()],
    )) as Array<{ sent: number | string }>;
    if (rows.length === 0) return undefined;
    return Number(rows[0].sent) === 1 ? 'sent' : 'pending';
  }

  async cancelScheduled(queryRunner: QueryRunner, messageId: string): Promise<boolean> {
    const result: unknown = await queryRunner.query(
      `delete from ${this.tables.scheduled} where message_id = ?`,
      [messageId.toLowerCase()],
    );
    return affectedRows(result) > 0;
  }

  /**
   * First one statement that tells whether any is due and when the next is (all an idle relay's look costs);
   * when some are, one READ COMMITTED transaction: lock the due rows through `(deliver_at, id)` (`SKIP LOCKED`:
   * another relay's move, a cancel in flight), insert them into the outbox in due order (an id the outbox holds
   * already is skipped), delete them; then the next due time again.
   */
  async moveDueScheduled(
    limit: number,
  ): Promise<{ moved: number; nextDueInMs: number | undefined; dropped: number }> {
    const first = await this.nextScheduledDueInMs();
    if (first === undefined || first > 0) return { moved: 0, nextDueInMs: first, dropped: 0 };
    const s = this.tables.scheduled;
    const { moved, dropped } = await inReadCommitted(this.dataSource, async (queryRunner) => {
      const due = (await queryRunner.query(
        `select id from ${s} force index (messaging_outbox_scheduled_due_idx)
         where deliver_at <= utc_timestamp(6) order by deliver_at, id limit ? for update skip locked`,
        [limit],
      )) as Array<{ id: string | number }>;
      if (due.length === 0) return { moved: 0, dropped: 0 };
      const ids = idList(due.map((r) => String(r.id)));
      const inserted: unknown = await queryRunner.query(
        `insert ignore into ${this.tables.outbox}
           (message_id, destination, type, \`key\`, headers, payload, occurred_at, created_at, available_at)
         select message_id, destination, type, \`key\`, headers, payload, occurred_at, utc_timestamp(6),
                utc_timestamp(6)
         from ${s} where id in (${ids}) order by deliver_at, id`,
      );
      await queryRunner.query(`delete from ${s} where id in (${ids})`);
      return { moved: due.length, dropped: due.length - affectedRows(inserted) };
    });
    const next = await this.nextScheduledDueInMs();
    // Due ones left (skipped: another relay moves them): the relay looks again at once.
    return { moved, nextDueInMs: next === undefined ? undefined : Math.max(0, next), dropped };
  }

  /** Milliseconds until the first scheduled message is due by the database's clock (0 or less: due). */
  private async nextScheduledDueInMs(): Promise<number | undefined> {
    const [{ due_in_us }] = await this.dataSource.query<Array<{ due_in_us: string | number | null }>>(
      `select timestampdiff(microsecond, utc_timestamp(6), min(deliver_at)) as due_in_us
       from ${this.tables.scheduled}`,
    );
    return due_in_us === null ? undefined : Math.ceil(Number(due_in_us) / 1000);
  }

  async scheduledTableExists(): Promise<boolean> {
    const [{ found }] = await this.dataSource.query<Array<{ found: number | string }>>(
      `select count(*) as found from information_schema.tables
       where table_schema = database() and table_name = 'messaging_outbox_scheduled'`,
    );
    return Number(found) > 0;
  }

  /**
   * Counted up to `SCHEDULED_EXACT_COUNT_LIMIT` (a read of at most that many index entries), InnoDB's estimate
   * (`table_rows`, which may be tens of percent off) above; the next due time from the due index's first entry.
   */
  async scheduledFigures(): Promise<{ scheduled: number; nextDueInMs: number | undefined }> {
    const s = this.tables.scheduled;
    const [{ counted, estimate, next_due_us }] = await this.dataSource.query<
      Array<{
        counted: string | number;
        estimate: string | number | null;
        next_due_us: string | number | null;
      }>
    >(
      `select (select count(*) from (select 1 from ${s} limit ?) c) as counted,
              (select table_rows from information_schema.tables
                where table_schema = database() and table_name = 'messaging_outbox_scheduled') as estimate,
              (select timestampdiff(microsecond, utc_timestamp(6), min(deliver_at)) from ${s}) as next_due_us`,
      [SCHEDULED_EXACT_COUNT_LIMIT + 1],
    );
    return {
      scheduled: beyondExact(Number(counted), estimate === null ? undefined : Number(estimate)),
      nextDueInMs: next_due_us === null ? undefined : Number(next_due_us) / 1000,
    };
  }

  notify(): Promise<void> {
    return Promise.reject(new Error('MySQL and MariaDB have no NOTIFY: relay.notify is refused at startup.'));
  }

  claim(
    limit: number,
    owner: string,
    leaseMs: number,
    inFlight: readonly string[] = [],
    sent: readonly string[] = [],
  ): Promise<ClaimedRows> {
    return inReadCommitted(this.dataSource, async (queryRunner) => {
      // First, in the claim's transaction: the rows are then sent to the pick and to the order check.
      await this.markSentWith(queryRunner, sent, owner);
      return claimMysqlRows(queryRunner, this.tables.outbox, { limit, owner, leaseMs, inFlight });
    });
  }

  async markSent(ids: readonly string[], owner: string): Promise<void> {
    await this.markSentWith(this.dataSource, ids, owner);
  }

  private async markSentWith(
    runner: { query(sql: string, parameters?: unknown[]): Promise<unknown> },
    ids: readonly string[],
    owner: string,
  ): Promise<void> {
    if (ids.length === 0) return;
    const t = this.tables.outbox;
    await runner.query(
      this.settings.keepSent
        ? `update ${t} set sent_at = utc_timestamp(6), locked_by = null, locked_until = null
           where id in (${idList(ids)}) and locked_by = ?`
        : `delete from ${t} where id in (${idList(ids)}) and locked_by = ?`,
      [owner],
    );
  }

  async markFailed(rows: readonly FailedOutboxRow[], owner: string): Promise<void> {
    if (rows.length === 0) return;
    idList(rows.map((r) => r.id)); // checks them
    const failed = rows.map((r) => [Number(r.id), r.error, Math.round(r.retryInMs)]);
    await this.dataSource.query(
      `update ${this.tables.outbox} o
       join json_table(?, '$[*]' columns (
              id bigint path '$[0]',
              error text character set utf8mb4 path '$[1]',
              delay_ms bigint path '$[2]')) f on o.id = f.id
       set o.attempts = o.attempts + 1, o.last_error = f.error, o.locked_by = null, o.locked_until = null,
           o.available_at = utc_timestamp(6) + interval f.delay_ms * 1000 microsecond
       where o.sent_at is null and o.locked_by = ?`,
      [JSON.stringify(failed), owner],
    );
  }

  async releaseRows(ids: readonly string[], owner: string): Promise<void> {
    if (ids.length === 0) return;
    await this.dataSource.query(
      `update ${this.tables.outbox} set locked_by = null, locked_until = null
       where id in (${idList(ids)}) and locked_by = ? and sent_at is null`,
      [owner],
    );
  }

  release(owner: string): Promise<number> {
    return inReadCommitted(this.dataSource, async (queryRunner) =>
      affectedRows(
        await queryRunner.query(
          `update ${this.tables.outbox} force index (messaging_outbox_pending_idx)
           set locked_by = null, locked_until = null where sent_at is null and locked_by = ?`,
          [owner],
        ),
      ),
    );
  }

  /**
   * Only one instance at a time: the others skip the round. The named lock (`GET_LOCK`) belongs to the
   * connection, so it is taken before the transaction and let go after its commit.
   */
  purgeSent(olderThanMs: number, batchSize: number): Promise<number> {
    const lock = "concat('messaging-outbox-purge:', left(sha2(database(), 256), 32))";
    return withConnection(this.dataSource, async (queryRunner) => {
      const [{ locked }] = (await queryRunner.query(`select get_lock(${lock}, 0) as locked`)) as Array<{
        locked: number | string | null;
      }>;
      if (Number(locked) !== 1) return 0;
      try {
        return await readCommitted(queryRunner, async () =>
          affectedRows(
            await queryRunner.query(
              `delete from ${this.tables.outbox}
               where sent_at is not null and sent_at < utc_timestamp(6) - interval ? microsecond
               order by sent_at limit ?`,
              [Math.round(olderThanMs) * 1000, batchSize],
            ),
          ),
        );
      } finally {
        await queryRunner.query(`select release_lock(${lock})`);
      }
    });
  }

  async nextHeldRowFreeAt(): Promise<Date | undefined> {
    const [{ free_at }] = await this.dataSource.query<Array<{ free_at: string | null }>>(
      `select date_format(min(case when locked_until > utc_timestamp(6) then locked_until else available_at end),
                          ${UTC_ISO}) as free_at
       from ${this.tables.outbox} force index (messaging_outbox_pending_idx)
       where sent_at is null and (locked_until > utc_timestamp(6) or available_at > utc_timestamp(6))`,
    );
    return free_at === null ? undefined : parseUtc(free_at);
  }

  async backlog(): Promise<OutboxBacklog[]> {
    const rows = await this.dataSource.query<
      Array<{ destination: string; pending: string | number; oldest_age_ms: string | number }>
    >(
      `select destination, count(*) as pending,
              timestampdiff(microsecond, min(created_at), utc_timestamp(6)) div 1000 as oldest_age_ms
       from ${this.tables.outbox} force index (messaging_outbox_pending_idx)
       where sent_at is null group by destination`,
    );
    return rows.map((r) => ({
      destination: r.destination,
      pending: Number(r.pending),
      oldestAgeMs: Math.max(0, Number(r.oldest_age_ms)),
    }));
  }

  /** `information_schema.tables.table_rows`: InnoDB's estimate, refreshed by its persistent statistics. */
  async tableRowEstimates(): Promise<Array<{ table: string; rows: number }>> {
    const rows = await this.dataSource.query<Array<{ name: string; estimate: string | number | null }>>(
      `select table_name as name, table_rows as estimate from information_schema.tables
       where table_schema = database() and table_name in ('messaging_outbox', 'messaging_inbox')`,
    );
    return rows.map((row) => ({ table: row.name, rows: Number(row.estimate ?? 0) }));
  }
}

/** A new row's values for the columns message_id … occurred_at, in that order (the outbox's and the scheduled table's). */
function rowParams(row: NewOutboxRow): unknown[] {
  return [
    row.messageId.toLowerCase(), // a uuid column would normalise it; char(36) keeps what it is given
    row.destination,
    row.type,
    row.key,
    JSON.stringify(row.headers),
    row.payloadJson,
    utcDatetime(row.occurredAt),
  ];
}
