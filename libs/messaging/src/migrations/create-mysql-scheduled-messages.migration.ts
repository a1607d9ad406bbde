import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Creates `messaging_outbox_scheduled` on MySQL and MariaDB: messages added with `deliverAt` or `delayMs` wait
 * there until they are due, then the relay moves them into the outbox (see `CreateScheduledMessages…` for
 * PostgreSQL). The relay's claim never reads a scheduled message that is not due; the move reads only the due
 * ones, through `(deliver_at, id)`. Times are UTC. Existing databases upgrade by running it.
 */
export class CreateMysqlScheduledMessages1765152000000 implements MigrationInterface {
  /** The migration's name, as TypeORM records it. */
  name = 'CreateMysqlScheduledMessages1765152000000';

  /** Applies the migration. */
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      create table if not exists messaging_outbox_scheduled (
        id bigint not null auto_increment,
        message_id char(36) character set ascii collate ascii_general_ci not null,
        destination varchar(200) not null,
        type varchar(200) not null,
        \`key\` text not null,
        headers json not null,
        payload json not null,
        occurred_at datetime(6) not null,
        created_at datetime(6) not null,
        deliver_at datetime(6) not null,
        primary key (id),
        unique key messaging_outbox_scheduled_message_id_key (message_id),
        key messaging_outbox_scheduled_due_idx (deliver_at, id)
      ) engine = InnoDB default character set utf8mb4 collate utf8mb4_bin`);
  }

  /** Reverts it (scheduled messages not yet due are dropped with the table). */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('drop table if exists messaging_outbox_scheduled');
  }
}
