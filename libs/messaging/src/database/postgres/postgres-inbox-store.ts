import { DataSource, QueryRunner } from 'typeorm';
import { InboxRecord, InboxStore } from '../../inbox/inbox-store';
import { MessagingTables } from '../messaging-tables';
import { postgresTables } from './postgres-tables';

/** The inbox on PostgreSQL: `on conflict do nothing returning` tells a first record from a duplicate. */
export class PostgresInboxStore extends InboxStore {
  readonly tables: MessagingTables;

  constructor(private readonly dataSource: DataSource) {
    super();
    this.tables = postgresTables(dataSource);
  }

  async tryRecord(queryRunner: QueryRunner, record: InboxRecord): Promise<boolean> {
    const rows = (await queryRunner.query(
      `insert into ${this.tables.inbox} (consumer_group, message_id, type, payload_hash)
       values ($1, $2, $3, $4) on conflict do nothing returning 1`,
      [record.group, record.messageId, record.type, record.payloadHash],
    )) as unknown[];
    return rows.length === 1;
  }

  async recordedHash(
    queryRunner: QueryRunner,
    group: string,
    messageId: string,
  ): Promise<string | undefined> {
    const rows = (await queryRunner.query(
      `select payload_hash from ${this.tables.inbox} where consumer_group = $1 and message_id = $2`,
      [group, messageId],
    )) as Array<{ payload_hash: string }>;
    return rows[0]?.payload_hash;
  }

  async purge(olderThanMs: number, batchSize: number): Promise<number> {
    const t = this.tables.inbox;
    const result = await this.dataSource.query<[unknown[], number]>(
      `delete from ${t} where (consumer_group, message_id) in (
         select consumer_group, message_id from ${t}
         where handled_at < now() - $1 * interval '1 millisecond' order by handled_at limit $2)`,
      [olderThanMs, batchSize],
    );
    return result[1];
  }
}
