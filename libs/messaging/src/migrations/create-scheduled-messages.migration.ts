import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaPrefix } from './create-messaging-tables.migration';

/**
 * Creates `messaging_outbox_scheduled` on PostgreSQL: messages added with `deliverAt` or `delayMs` wait there,
 * not in the outbox, until they are due; the relay then moves them into the outbox (in due order) and publishes
 * them as any other row. The relay's claim never reads a scheduled message that is not due, so a backlog of
 * future messages costs it nothing; the move reads only the due ones, through `(deliver_at, id)`.
 * Existing databases upgrade by running it (the outbox table is left as it is).
 */
export class CreateScheduledMessages1765152000000 implements MigrationInterface {
  /** The migration's name, as TypeORM records it. */
  name = 'CreateScheduledMessages1765152000000';

  /** Applies the migration. */
  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaPrefix(queryRunner);
    await queryRunner.query(`
      create table if not exists ${s}messaging_outbox_scheduled (
        id bigint generated always as identity primary key,
        message_id uuid not null,
        destination varchar(200) not null,
        type varchar(200) not null,
        key text not null,
        headers jsonb not null default '{}'::jsonb,
        payload jsonb not null,
        occurred_at timestamptz not null,
        created_at timestamptz not null default now(),
        deliver_at timestamptz not null
      )`);
    await queryRunner.query(
      `create unique index if not exists messaging_outbox_scheduled_message_id_key
         on ${s}messaging_outbox_scheduled (message_id)`,
    );
    await queryRunner.query(
      `create index if not exists messaging_outbox_scheduled_due_idx
         on ${s}messaging_outbox_scheduled (deliver_at, id)`,
    );
  }

  /** Reverts it (scheduled messages not yet due are dropped with the table). */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`drop table if exists ${schemaPrefix(queryRunner)}messaging_outbox_scheduled`);
  }
}
