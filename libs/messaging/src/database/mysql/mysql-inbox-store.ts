import { DataSource, QueryRunner } from 'typeorm';
import { InboxKey, InboxRecord, InboxStore } from '../../inbox/inbox-store';
import { CreateMysqlMessagingAttempts1764892800000 } from '../../migrations/create-mysql-attempts-table.migration';
import { MessagingTables } from '../messaging-tables';
import { affectedRows, inReadCommitted, isDuplicateKey } from './mysql-sql';
import { mysqlTables } from './mysql-tables';

/**
 * The inbox on MySQL and MariaDB: a plain insert, and a duplicate key means the message was handled. A
 * failed statement does not abort an InnoDB transaction, so the handler's transaction goes on (to nothing:
 * the delivery is a duplicate). `INSERT IGNORE` would also turn other errors, such as a value too long,
 * into warnings.
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

  async tryRecord(
    queryRunner: QueryRunner,
    record: InboxRecord,
    savepoint?: string,
  ): Promise<{ recorded: boolean; failedBefore: number }> {
    // No statements in one round trip here (the driver's multipleStatements is the application's choice).
    if (savepoint !== undefined) await queryRunner.query(`savepoint ${savepoint}`);
    const messageId = record.messageId.toLowerCase();
    let recorded = true;
    try {
      await queryRunner.query(
        `insert into ${this.tables.inbox} (consumer_group, message_id, type, payload_hash, handled_at)
         values (?, ?, ?, ?, utc_timestamp(6))`,
        [record.group, messageId, record.type, record.payloadHash],
      );
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      recorded = false;
    }
    const rows = (await queryRunner.query(
      `select failed_attempts from ${this.tables.attempts}
       where consumer_group = ? and message_id = ? and redrive_id = ?`,
      [record.group, messageId, record.redriveId],
    )) as Array<{ failed_attempts: number }>;
    return { recorded, failedBefore: Number(rows[0]?.failed_attempts ?? 0) };
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
