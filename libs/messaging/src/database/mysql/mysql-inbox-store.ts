import { DataSource, QueryRunner } from 'typeorm';
import { InboxKey, InboxRecord, InboxStore } from '../../inbox/inbox-store';
import { CreateMysqlMessagingAttempts1764892800000 } from '../../migrations/create-mysql-attempts-table.migration';
import { MessagingTables } from '../../tables/messaging-tables';
import { affectedRows, inReadCommitted, isDuplicateKey } from './mysql-sql';
import { mysqlTables } from '../../tables/mysql-tables';

/**
 * The inbox on MySQL and MariaDB: a plain insert, and a duplicate key means the message was handled. A
 * batch's records go in one insert; a failed statement does not abort an InnoDB transaction (it rolls back
 * alone), so on a duplicate key each record is inserted again on its own to tell which was there.
 * `INSERT IGNORE` would also turn other errors, such as a value too long, into warnings.
 */
export class MysqlInboxStore extends InboxStore {
  readonly tables: MessagingTables;
  readonly attemptsMigration = {
    name: CreateMysqlMessagingAttempts1764892800000.name,
    list: 'MysqlMessagingMigrations',
  };

  constructor(private readonly dataSource: DataSource) {
    super();
    this.tables = mysqlTables(dataSource);
  }

  async attemptsTableExists(): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>(
      `select 1 from information_schema.tables where table_schema = database() and table_name = ?`,
      [this.tables.attempts],
    );
    return rows.length > 0;
  }

  async tryRecordAll(
    queryRunner: QueryRunner,
    records: readonly InboxRecord[],
  ): Promise<Array<{ recorded: boolean; failedBefore: number }>> {
    const rows = records.map((r) => ({ ...r, messageId: r.messageId.toLowerCase() }));
    // One insert for the batch; a duplicate key in it fails the statement alone, and then each goes alone.
    let recorded: boolean[];
    try {
      await this.insert(queryRunner, rows);
      recorded = rows.map(() => true);
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      recorded = [];
      if (rows.length === 1) recorded.push(false);
      else for (const row of rows) recorded.push(await this.insertUnlessThere(queryRunner, row));
    }
    const failed = new Map<string, number>();
    for (const group of new Set(rows.map((r) => r.group))) {
      const ids = rows.filter((r) => r.group === group).map((r) => r.messageId);
      const found = (await queryRunner.query(
        `select message_id, redrive_id, failed_attempts from ${this.tables.attempts}
         where consumer_group = ? and message_id in (${ids.map(() => '?').join(', ')})`,
        [group, ...ids],
      )) as Array<{ message_id: string; redrive_id: string; failed_attempts: number }>;
      for (const f of found)
        failed.set(`${group}/${f.message_id}/${f.redrive_id}`, Number(f.failed_attempts));
    }
    return rows.map((r, i) => ({
      recorded: recorded[i],
      failedBefore: failed.get(`${r.group}/${r.messageId}/${r.redriveId}`) ?? 0,
    }));
  }

  private async insert(queryRunner: QueryRunner, rows: readonly InboxRecord[]): Promise<void> {
    await queryRunner.query(
      `insert into ${this.tables.inbox} (consumer_group, message_id, type, payload_hash, handled_at)
       values ${rows.map(() => '(?, ?, ?, ?, utc_timestamp(6))').join(', ')}`,
      rows.flatMap((r) => [r.group, r.messageId, r.type, r.payloadHash]),
    );
  }

  /** True when inserted; false on a duplicate key (the message is there). */
  private async insertUnlessThere(queryRunner: QueryRunner, row: InboxRecord): Promise<boolean> {
    try {
      await this.insert(queryRunner, [row]);
      return true;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      return false;
    }
  }

  async recordedHash(
    queryRunner: QueryRunner,
    group: string,
    messageId: string,
  ): Promise<string | undefined> {
    const rows = (await queryRunner.query(
      `select payload_hash from ${this.tables.inbox} where consumer_group = ? and message_id = ?`,
      [group, messageId.toLowerCase()],
    )) as Array<{ payload_hash: string }>;
    return rows[0]?.payload_hash;
  }

  async recordFailedAttempts(key: InboxKey, failedAttempts: number): Promise<void> {
    // The values are read before the assignments change them (redrive_id is set last).
    await this.dataSource.query(
      `insert into ${this.tables.attempts} (consumer_group, message_id, redrive_id, failed_attempts, updated_at)
       values (?, ?, ?, ?, utc_timestamp(6))
       on duplicate key update
         failed_attempts = if(redrive_id = values(redrive_id),
                              greatest(failed_attempts, values(failed_attempts)), values(failed_attempts)),
         updated_at = values(updated_at),
         redrive_id = values(redrive_id)`,
      [key.group, key.messageId.toLowerCase(), key.redriveId, failedAttempts],
    );
  }

  async forgetFailedAttempts(
    key: Pick<InboxKey, 'group' | 'messageId'>,
    queryRunner?: QueryRunner,
  ): Promise<void> {
    const sql = `delete from ${this.tables.attempts} where consumer_group = ? and message_id = ?`;
    await (queryRunner ?? this.dataSource).query(sql, [key.group, key.messageId.toLowerCase()]);
  }

  purge(olderThanMs: number, batchSize: number): Promise<number> {
    const olderThanUs = Math.round(olderThanMs) * 1000;
    return inReadCommitted(this.dataSource, async (queryRunner) => {
      await queryRunner.query(
        `delete from ${this.tables.attempts} where updated_at < utc_timestamp(6) - interval ? microsecond
         order by updated_at limit ?`,
        [olderThanUs, batchSize],
      );
      return affectedRows(
        await queryRunner.query(
          `delete from ${this.tables.inbox} where handled_at < utc_timestamp(6) - interval ? microsecond
           order by handled_at limit ?`,
          [olderThanUs, batchSize],
        ),
      );
    });
  }
}
