import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaPrefix } from './create-messaging-tables.migration';

/**
 * Creates `messaging_attempts`, beside the inbox: per consumer group and message, the deliveries that failed
 * while the message was retried in place (a paused Kafka partition, an inline retry), so that `maxAttempts`
 * holds when the consumer restarts or the partition moves to another one. `redrive_id` starts the count
 * afresh for a redriven message. Rows are deleted once the message is settled, and by the inbox retention.
 */
export class CreateMessagingAttempts1764720000000 implements MigrationInterface {
  /** The migration's name, as TypeORM records it. */
  name = 'CreateMessagingAttempts1764720000000';

  /** Applies the migration. */
  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaPrefix(queryRunner);
    await queryRunner.query(`
      create table if not exists ${s}messaging_attempts (
        consumer_group varchar(200) not null,
        message_id uuid not null,
        redrive_id text not null default '',
        failed_attempts integer not null,
        updated_at timestamptz not null default now(),
        primary key (consumer_group, message_id)
      )`);
    await queryRunner.query(
      `create index if not exists messaging_attempts_updated_idx on ${s}messaging_attempts (updated_at)`,
    );
  }

  /** Reverts it. */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`drop table if exists ${schemaPrefix(queryRunner)}messaging_attempts`);
  }
}
