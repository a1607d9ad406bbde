import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Creates the outbox and inbox tables on MySQL 8.0.4+ or MariaDB 10.6+, in the connection's database. Add
 * `MysqlMessagingMigrations` (not `MessagingMigrations`, which is PostgreSQL's SQL) to your DataSource's
 * `migrations` and run them.
 *
 * InnoDB has no partial indexes. What replaces them: indexes in which `sent_at` comes before `id`, so that
 * the pending rows (`sent_at is null`) are one range at the front of each, ordered by id, and a claim never
 * reads a sent row however many the table holds; the same `(sent_at, id)` index serves the purge. The key
 * is indexed through its SHA-256 (`key_hash`), so keys of any length fit. Text compares byte for byte
 * (`utf8mb4_bin`), as on PostgreSQL: `Key` and `key` are two keys, two consumer groups. Times are UTC.
 */
export class CreateMysqlMessagingTables1764806400000 implements MigrationInterface {
  /** The migration's name, as TypeORM records it. */
  name = 'CreateMysqlMessagingTables1764806400000';

  /** Applies the migration. */
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      create table if not exists messaging_outbox (
        id bigint not null auto_increment,
        message_id char(36) character set ascii collate ascii_general_ci not null,
        destination varchar(200) not null,
        type varchar(200) not null,
        \`key\` text not null,
        key_hash binary(32) generated always as (unhex(sha2(\`key\`, 256))) stored,
        headers json not null,
        payload json not null,
        occurred_at datetime(6) not null,
        created_at datetime(6) not null,
        available_at datetime(6) not null,
        attempts integer not null default 0,
        last_error text,
        locked_by text,
        locked_until datetime(6),
        sent_at datetime(6),
        primary key (id),
        unique key messaging_outbox_message_id_key (message_id),
        key messaging_outbox_pending_idx (sent_at, id),
        key messaging_outbox_pending_key_idx (destination, key_hash, sent_at, id)
      ) engine = InnoDB default character set utf8mb4 collate utf8mb4_bin`);
    await queryRunner.query(`
      create table if not exists messaging_inbox (
        consumer_group varchar(200) not null,
        message_id char(36) character set ascii collate ascii_general_ci not null,
        type varchar(200) not null,
        payload_hash char(64) character set ascii not null,
        handled_at datetime(6) not null,
        primary key (consumer_group, message_id),
        key messaging_inbox_handled_idx (handled_at)
      ) engine = InnoDB default character set utf8mb4 collate utf8mb4_bin`);
  }

  /** Reverts it. */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('drop table if exists messaging_inbox');
    await queryRunner.query('drop table if exists messaging_outbox');
  }
}
