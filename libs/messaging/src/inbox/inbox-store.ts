import { Inject, Injectable } from '@nestjs/common';
import { DataSource, QueryRunner } from 'typeorm';
import { MESSAGING_DATA_SOURCE } from '../messaging.constants';
import { messagingTables, MessagingTables } from '../outbox/messaging-tables';

/** The inbox table, in SQL. */
@Injectable()
export class InboxStore {
  readonly tables: MessagingTables;

  constructor(@Inject(MESSAGING_DATA_SOURCE) private readonly dataSource: DataSource) {
    this.tables = messagingTables(dataSource);
  }

  /**
   * Records (group, messageId) in the caller's transaction. False when it is there already: a duplicate.
   * A concurrent delivery of the same message waits on the primary key until the first one's transaction
   * ends, then sees the conflict (or, if that one rolled back, inserts).
   */
  async tryRecord(
    queryRunner: QueryRunner,
    record: { group: string; messageId: string; type: string; payloadHash: string },
  ): Promise<boolean> {
    const rows = (await queryRunner.query(
      `insert into ${this.tables.inbox} (consumer_group, message_id, type, payload_hash)
       values ($1, $2, $3, $4) on conflict do nothing returning 1`,
      [record.group, record.messageId, record.type, record.payloadHash],
    )) as unknown[];
    return rows.length === 1;
  }

  /** The payload hash recorded for a message, if any. */
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

  /** Deletes up to `batchSize` records older than `olderThanMs`; returns how many. */
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
