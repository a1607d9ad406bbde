import { DataSource, QueryRunner } from 'typeorm';
import { InboxKey, InboxRecord, InboxStore } from '../../inbox/inbox-store';
import { CreateMessagingAttempts1764720000000 } from '../../migrations/create-attempts-table.migration';
import { MessagingTables } from '../../tables/messaging-tables';
import { postgresTables } from '../../tables/postgres-tables';

/**
 * The inbox on PostgreSQL: `on conflict do nothing returning` tells a first record from a duplicate, for a
 * whole batch in one statement that also reads the messages' failed attempts.
 */
export class PostgresInboxStore extends InboxStore {
  readonly tables: MessagingTables;
  readonly attemptsMigration = {
    name: CreateMessagingAttempts1764720000000.name,
    list: 'MessagingMigrations',
  };

  constructor(private readonly dataSource: DataSource) {
    super();
    this.tables = postgresTables(dataSource);
  }

  async attemptsTableExists(): Promise<boolean> {
    const [{ found }] = await this.dataSource.query<Array<{ found: string | null }>>(
      'select to_regclass($1) as found',
      [this.tables.attempts],
    );
    return found !== null;
  }

  async tryRecordAll(
    queryRunner: QueryRunner,
    records: readonly InboxRecord[],
  ): Promise<Array<{ recorded: boolean; failedBefore: number }>> {
    const { inbox, attempts } = this.tables;
    // One statement for the batch: the records as arrays, inserted in order, each told recorded or not.
    const rows = (await queryRunner.query(
      `with input as (
         select * from unnest($1::varchar[], $2::uuid[], $3::varchar[], $4::char(64)[], $5::text[])
           with ordinality as t (consumer_group, message_id, type, payload_hash, redrive_id, n)
       ), recorded as (
         insert into ${inbox} (consumer_group, message_id, type, payload_hash)
         select consumer_group, message_id, type, payload_hash from input order by n
         on conflict do nothing returning consumer_group, message_id
       )
       select exists (select 1 from recorded r
                      where r.consumer_group = i.consumer_group and r.message_id = i.message_id) as recorded,
              a.failed_attempts as failed
       from input i
       left join ${attempts} a on a.consumer_group = i.consumer_group and a.message_id = i.message_id
                              and a.redrive_id = i.redrive_id
       order by i.n`,
      [
        records.map((r) => r.group),
        records.map((r) => r.messageId),
        records.map((r) => r.type),
        records.map((r) => r.payloadHash),
        records.map((r) => r.redriveId),
      ],
    )) as Array<{ recorded: boolean; failed: number | null }>;
    return rows.map((row) => ({ recorded: row.recorded, failedBefore: row.failed ?? 0 }));
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

  async forgetFailedAttempts(
    key: Pick<InboxKey, 'group' | 'messageId'>,
    queryRunner?: QueryRunner,
  ): Promise<void> {
    const sql = `delete from ${this.tables.attempts} where consumer_group = $1 and message_id = $2`;
    await (queryRunner ?? this.dataSource).query(sql, [key.group, key.messageId]);
  }

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
