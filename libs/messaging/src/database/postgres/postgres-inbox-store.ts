import { DataSource, QueryFailedError, QueryRunner } from 'typeorm';
import { InboxKey, InboxRecord, InboxStore } from '../../inbox/inbox-store';
import { CreateMessagingAttempts1764720000000 } from '../../migrations/create-attempts-table.migration';
import { MessagingTables } from '../messaging-tables';
import { postgresTables } from './postgres-tables';

/**
 * The inbox on PostgreSQL: `on conflict do nothing returning` tells a first record from a duplicate, and the
 * same round trip reads the message's failed attempts.
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

  async tryRecord(
    queryRunner: QueryRunner,
    record: InboxRecord,
    savepoint?: string,
  ): Promise<{ recorded: boolean; failedBefore: number }> {
    const values = [record.group, record.messageId, record.type, record.payloadHash, record.redriveId];
    let row: { recorded: boolean; failed: number | null };
    if (savepoint === undefined) {
      [row] = (await queryRunner.query(this.recordSql(['$1', '$2', '$3', '$4', '$5']), values)) as Array<
        typeof row
      >;
    } else {
      // One round trip for both: the simple protocol takes several statements, but no parameters.
      const client = driverClient(queryRunner);
      const sql = `savepoint ${savepoint}; ${this.recordSql(values.map((v) => client.escapeLiteral(v)))}`;
      let results: Array<{ rows: Array<typeof row> }>;
      try {
        results = await client.query(sql);
      } catch (error) {
        throw new QueryFailedError(sql, [], error as Error);
      }
      [row] = results[1].rows;
    }
    return { recorded: row.recorded, failedBefore: row.failed ?? 0 };
  }

  /** Records (group, id, type, hash) unless there, and reads the failed attempts of (group, id, redrive id). */
  private recordSql([group, messageId, type, hash, redriveId]: readonly string[]): string {
    return `with recorded as (
         insert into ${this.tables.inbox} (consumer_group, message_id, type, payload_hash)
         values (${group}, ${messageId}, ${type}, ${hash}) on conflict do nothing returning 1
       )
       select exists (select 1 from recorded) as recorded,
              (select failed_attempts from ${this.tables.attempts}
               where consumer_group = ${group} and message_id = ${messageId} and redrive_id = ${redriveId}) as failed`;
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

/** The node-postgres client under a connected TypeORM query runner. */
interface PgClient {
  query(sql: string): Promise<Array<{ rows: never[] }>>;
  escapeLiteral(value: string): string;
}

function driverClient(queryRunner: QueryRunner): PgClient {
  return (queryRunner as unknown as { databaseConnection: PgClient }).databaseConnection;
}
