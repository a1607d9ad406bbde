import { QueryRunner } from 'typeorm';
import { MessagingTables } from '../database/messaging-tables';

/** What the inbox records of a handled message. */
export interface InboxRecord {
  readonly group: string;
  readonly messageId: string;
  readonly type: string;
  /** SHA-256 of the payload, hex. */
  readonly payloadHash: string;
}

/**
 * The inbox table in one database's SQL (`database/postgres`, `database/mysql`), chosen from the
 * DataSource's type at startup.
 */
export abstract class InboxStore {
  abstract readonly tables: MessagingTables;

  /**
   * Records (group, messageId) in the caller's transaction. False when it is there already: a duplicate.
   * A concurrent delivery of the same message waits on the primary key until the first one's transaction
   * ends, then sees the conflict (or, if that one rolled back, inserts).
   */
  abstract tryRecord(queryRunner: QueryRunner, record: InboxRecord): Promise<boolean>;

  /** The payload hash recorded for a message, if any. */
  abstract recordedHash(
    queryRunner: QueryRunner,
    group: string,
    messageId: string,
  ): Promise<string | undefined>;

  /** Deletes up to `batchSize` records older than `olderThanMs`; returns how many. */
  abstract purge(olderThanMs: number, batchSize: number): Promise<number>;
}
