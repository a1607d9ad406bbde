import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Creates the outbox and inbox tables and their indexes. Add `MessagingMigrations` to your DataSource's
 * `migrations` and run them (`typeorm migration:run`, or `migrationsRun: true`).
 *
 * The partial indexes cover pending rows only, so finding work costs the same whether the table also
 * holds a thousand or ten million sent rows.
 */
export class CreateMessagingTables1764547200000 implements MigrationInterface {
  /** The migration's name, as TypeORM records it. */
  name = 'CreateMessagingTables1764547200000';

  /** Applies the migration. */
  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaPrefix(queryRunner);
    await queryRunner.query(`
      create table if not exists ${s}messaging_outbox (
        id bigint generated always as identity primary key,
        message_id uuid not null,
        destination varchar(200) not null,
        type varchar(200) not null,
        key text not null,
        headers jsonb not null default '{}'::jsonb,
        payload jsonb not null,
        occurred_at timestamptz not null,
        created_at timestamptz not null default now(),
        available_at timestamptz not null default now(),
        attempts integer not null default 0,
        last_error text,
        locked_by text,
        locked_until timestamptz,
        sent_at timestamptz
      )`);
    await queryRunner.query(
      `create unique index if not exists messaging_outbox_message_id_key on ${s}messaging_outbox (message_id)`,
    );
    await queryRunner.query(
      `create index if not exists messaging_outbox_pending_idx on ${s}messaging_outbox (id) where sent_at is null`,
    );
    await queryRunner.query(
      `create index if not exists messaging_outbox_pending_key_idx on ${s}messaging_outbox (destination, key, id) where sent_at is null`,
    );
    await queryRunner.query(
      `create index if not exists messaging_outbox_sent_idx on ${s}messaging_outbox (sent_at) where sent_at is not null`,
    );
    await queryRunner.query(`
      create table if not exists ${s}messaging_inbox (
        consumer_group varchar(200) not null,
        message_id uuid not null,
        type varchar(200) not null,
        payload_hash char(64) not null,
        handled_at timestamptz not null default now(),
        primary key (consumer_group, message_id)
      )`);
    await queryRunner.query(
      `create index if not exists messaging_inbox_handled_idx on ${s}messaging_inbox (handled_at)`,
    );
  }

  /** Reverts it. */
  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaPrefix(queryRunner);
    await queryRunner.query(`drop table if exists ${s}messaging_inbox`);
    await queryRunner.query(`drop table if exists ${s}messaging_outbox`);
  }
}

/** `"schema".` when the DataSource names a schema; empty (the search_path) otherwise. */
export function schemaPrefix(queryRunner: QueryRunner): string {
  const schema = (queryRunner.connection.options as { schema?: string }).schema;
  return schema ? `"${schema.replace(/"/g, '""')}".` : '';
}
