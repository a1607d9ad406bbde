import { Inject, Injectable } from '@nestjs/common';
import { DataSource, QueryRunner } from 'typeorm';
import { MESSAGING_DATA_SOURCE } from '../messaging.constants';
import { messagingTables, MessagingTables } from '../outbox/messaging-tables';

/** Which message, for which consumer group; `redriveId` tells a redriven copy (its count starts afresh). */
export interface InboxKey {
  readonly group: string;
  readonly messageId: string;
  readonly redriveId: string;
}

/** The inbox table and, beside it, the failed attempts of messages retried in place, in SQL. */
@Injectable()
export class InboxStore {
  readonly tables: MessagingTables;

  constructor(@Inject(MESSAGING_DATA_SOURCE) private readonly dataSource: DataSource) {
    this.tables = messagingTables(dataSource);
  }

  /**
   * Records (group, messageId) in the caller's transaction; `recorded` is false when it is there already (a
   * duplicate). A concurrent delivery of the same message waits on the primary key until the first one's
   * transaction ends, then sees the conflict (or, if that one rolled back, inserts). In the same round trip:
   * how many deliveries of this message failed in place so far.
   */
  async tryRecord(
    queryRunner: QueryRunner,
    record: InboxKey & { type: string; payloadHash: string },
  ): Promise<{ recorded: boolean; failedBefore: number }> {
    const [row] = (await queryRunner.query(
      `with recorded as (
         insert into ${this.tables.inbox} (consumer_group, message_id, type, payload_hash)
         values ($1, $2, $3, $4) on conflict do nothing returning 1
       )
       select exists (select 1 from recorded) as recorded,
              (select failed_attempts from ${this.tables.attempts}
               where consumer_group = $1 and message_id = $2 and redrive_id = $5) as failed`,
      [record.group, record.messageId, record.type, record.payloadHash, record.redriveId],
    )) as Array<{ recorded: boolean; failed: number | null }>;
    return { recorded: row.recorded, failedBefore: row.failed ?? 0 };
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

  /** Remembers that `failedAttempts` deliveries of the message failed (never lowers the count). */
  async recordFailedAttempts(key: InboxKey, failedAttempts: number): Promise<void> {
    await this.dataSource.query(
      `insert into ${this.tables.attempts} as a (consumer_group, message_id, redrive_id, failed_attempts)
       values ($1, $2, $3, $4)
       on conflict (consumer_group, message_id) do update
       set failed_attempts = case when a.redrive_id = excluded.redrive_id
                                  then greatest(a.failed_attempts, excluded.failed_attempts)
                                  else excluded.failed_attempts end,
           redrive_id = excluded.redrive_id, updated_at = now()`,
      [key.group, key.messageId, key.redriveId, failedAttempts],
    );
  }

  /** Forgets the failed attempts of a settled message (in the caller's transaction, if one is given). */
  async forgetFailedAttempts(
    key: Pick<InboxKey, 'group' | 'messageId'>,
    queryRunner?: QueryRunner,
  ): Promise<void> {
    const sql = `delete from ${this.tables.attempts} where consumer_group = $1 and message_id = $2`;
    if (queryRunner) await queryRunner.query(sql, [key.group, key.messageId]);
    else await this.dataSource.query(sql, [key.group, key.messageId]);
  }

  /**
   * Deletes up to `batchSize` inbox records older than `olderThanMs`, and attempt counts not touched for as
   * long (a message that never came back); returns how many inbox records.
   */
  async purge(olderThanMs: number, batchSize: number): Promise<number> {
    const { inbox, attempts } = this.tables;
    await this.dataSource.query(
      `delete from ${attempts} where (consumer_group, message_id) in (
         select consumer_group, message_id from ${attempts}
         where updated_at < now() - $1 * interval '1 millisecond' order by updated_at limit $2)`,
      [olderThanMs, batchSize],
    );
    const result = await this.dataSource.query<[unknown[], number]>(
      `delete from ${inbox} where (consumer_group, message_id) in (
         select consumer_group, message_id from ${inbox}
         where handled_at < now() - $1 * interval '1 millisecond' order by handled_at limit $2)`,
      [olderThanMs, batchSize],
    );
    return result[1];
  }
}
