import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Creates `messaging_attempts` on MySQL and MariaDB, beside the inbox: per consumer group and message, the
 * deliveries that failed while the message was retried in place (a paused Kafka partition, an inline retry),
 * so that `maxAttempts` holds when the consumer restarts. `redrive_id` starts the count afresh for a redriven
 * message. Times are UTC.
 */
export class CreateMysqlMessagingAttempts1764892800000 implements MigrationInterface {
  /** The migration's name, as TypeORM records it. */
  name = 'CreateMysqlMessagingAttempts1764892800000';

  /** Applies the migration. */
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      create table if not exists messaging_attempts (
        consumer_group varchar(200) not null,
        message_id char(36) character set ascii collate ascii_general_ci not null,
        redrive_id varchar(64) character set ascii not null default '',
        failed_attempts integer not null,
        updated_at datetime(6) not null,
        primary key (consumer_group, message_id),
        key messaging_attempts_updated_idx (updated_at)
      ) engine = InnoDB default character set utf8mb4 collate utf8mb4_bin`);
  }

  /** Reverts it. */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('drop table if exists messaging_attempts');
  }
}
