import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaPrefix } from './create-messaging-tables.migration';

/**
 * The redrive ledger, in the admin database (`MESSAGING_ADMIN_DATABASE_URL`): an append-only audit log of
 * every plan, approval, execution and refusal (`nest-messaging dlq history` reads it), and the nonces of executed
 * approvals, which makes each approval work once across processes. Harmless in a service's database.
 */
export class CreateRedriveLedger1764892800000 implements MigrationInterface {
  /** The migration's name, as TypeORM records it. */
  name = 'CreateRedriveLedger1764892800000';

  /** Applies the migration. */
  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaPrefix(queryRunner);
    await queryRunner.query(`
      create table if not exists ${s}messaging_redrive_audit (
        id bigint generated always as identity primary key,
        at timestamptz not null default now(),
        action varchar(16) not null,
        actor varchar(256) not null,
        transport varchar(16) not null,
        source varchar(255),
        target varchar(255),
        plan_hash varchar(80),
        approver varchar(100),
        redrive_id uuid,
        message_ids jsonb not null default '[]'::jsonb,
        outcome varchar(40) not null,
        detail text
      )`);
    await queryRunner.query(
      `create index if not exists messaging_redrive_audit_source_idx on ${s}messaging_redrive_audit (source, id)`,
    );
    // Append-only: an entry is never changed or removed, not even by the table's owner without dropping this.
    await queryRunner.query(`
      create or replace function ${s}messaging_redrive_audit_append_only() returns trigger
      language plpgsql as $$
      begin
        raise exception 'messaging_redrive_audit is append-only';
      end $$`);
    await queryRunner.query(`
      drop trigger if exists messaging_redrive_audit_append_only on ${s}messaging_redrive_audit`);
    await queryRunner.query(`
      create trigger messaging_redrive_audit_append_only
      before update or delete on ${s}messaging_redrive_audit
      for each statement execute function ${s}messaging_redrive_audit_append_only()`);
    await queryRunner.query(`
      create table if not exists ${s}messaging_redrive_nonce (
        nonce varchar(64) primary key,
        plan_hash varchar(80) not null,
        approver varchar(100) not null,
        redrive_id uuid not null,
        executed_by varchar(256) not null,
        used_at timestamptz not null default now()
      )`);
  }

  /** Reverts the migration. */
  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaPrefix(queryRunner);
    await queryRunner.query(`drop table if exists ${s}messaging_redrive_nonce`);
    await queryRunner.query(`drop table if exists ${s}messaging_redrive_audit`);
    await queryRunner.query(`drop function if exists ${s}messaging_redrive_audit_append_only()`);
  }
}
