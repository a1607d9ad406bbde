import { QueryRunner } from 'typeorm';
import { MessagingTables } from '../tables/messaging-tables';

/** Which message, for which consumer group; `redriveId` tells a redriven copy (its count starts afresh). */
export interface InboxKey {
  readonly group: string;
  readonly messageId: string;
  readonly redriveId: string;
}

/** What the inbox records of a handled message. */
export interface InboxRecord extends InboxKey {
  readonly type: string;
  /** SHA-256 of the payload, hex. */
  readonly payloadHash: string;
}

/**
 * The inbox table and, beside it, the failed attempts of messages retried in place (`messaging_attempts`),
 * in one database's SQL (`database/postgres`, `database/mysql`), chosen from the DataSource's type at
 * startup.
 */
export abstract class InboxStore {
  abstract readonly tables: MessagingTables;
  /** The migration that creates the attempts table and the exported list that holds it, for the startup error. */
  abstract readonly attemptsMigration: { readonly name: string; readonly list: string };

  /** True when the attempts table exists (its migration ran). */
  abstract attemptsTableExists(): Promise<boolean>;

  /**
   * Records each (group, messageId) in the caller's transaction, in one statement where the database
   * allows it, and says for each, in the same order, whether it was recorded now (`recorded` false: it is
   * there already, a duplicate) and how many deliveries of it failed in place so far. A concurrent delivery
   * of the same message waits on the primary key until the first one's transaction ends, then sees the
   * conflict (or, if that one rolled back, inserts). The records name distinct messages.
   */
  abstract tryRecordAll(
    queryRunner: QueryRunner,
    records: readonly InboxRecord[],
  ): Promise<Array<{ recorded: boolean; failedBefore: number }>>;

  /** The payload hash recorded for a message, if any. */
  abstract recordedHash(
    queryRunner: QueryRunner,
    group: string,
    messageId: string,
  ): Promise<string | undefined>;

  /** Remembers that `failedAttempts` deliveries of the message failed (never lowers the count). */
  abstract recordFailedAttempts(key: InboxKey, failedAttempts: number): Promise<void>;

  /** Forgets the failed attempts of a settled message (in the caller's transaction, if one is given). */
  abstract forgetFailedAttempts(
    key: Pick<InboxKey, 'group' | 'messageId'>,
    queryRunner?: QueryRunner,
  ): Promise<void>;

  /**
   * Deletes up to `batchSize` inbox records older than `olderThanMs`, and attempt counts not touched for as
   * long (a message that never came back); returns how many inbox records.
   */
  abstract purge(olderThanMs: number, batchSize: number): Promise<number>;
}
