import { DataSource, QueryRunner } from 'typeorm';
import { InboxRecord, InboxStore } from '../../inbox/inbox-store';
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

  constructor(private readonly dataSource: DataSource) {
    super();
    this.tables = mysqlTables(dataSource);
  }

  async tryRecord(queryRunner: QueryRunner, record: InboxRecord): Promise<boolean> {
    try {
      await queryRunner.query(
        `insert into ${this.tables.inbox} (consumer_group, message_id, type, payload_hash, handled_at)
         values (?, ?, ?, ?, utc_timestamp(6))`,
        [record.group, record.messageId.toLowerCase(), record.type, record.payloadHash],
      );
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
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

  purge(olderThanMs: number, batchSize: number): Promise<number> {
    return inReadCommitted(this.dataSource, async (queryRunner) =>
      affectedRows(
        await queryRunner.query(
          `delete from ${this.tables.inbox} where handled_at < utc_timestamp(6) - interval ? microsecond
           order by handled_at limit ?`,
          [Math.round(olderThanMs) * 1000, batchSize],
        ),
      ),
    );
  }
}
