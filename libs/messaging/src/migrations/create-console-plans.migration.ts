import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaPrefix } from './create-messaging-tables.migration';

/**
 * The console's redrive plans, in the admin database (`PostgresConsolePlanStore`): a plan outlives a
 * console restart between plan, approval and execution. The login of the CLI and the console needs SELECT,
 * INSERT and UPDATE of the columns that change (approval, result, executed_at, stale_at, refusals), no
 * DELETE (docs/guide/08-redrive.md). An approval and a result, once set, never change (a trigger, also for
 * the owner). Not trusted for what counts: the redrive checks plans against the audit log and approvals by
 * their signatures.
 */
export class CreateConsolePlans1765065600000 implements MigrationInterface {
  /** The migration's name, as TypeORM records it. */
  name = 'CreateConsolePlans1765065600000';

  /** Applies the migration. */
  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaPrefix(queryRunner);
    await queryRunner.query(`
      create table if not exists ${s}messaging_console_plan (
        id uuid primary key,
        created_at timestamptz not null default now(),
        source varchar(255) not null,
        planned_by varchar(256) not null,
        plan_hash varchar(80) not null,
        plan jsonb not null,
        approval jsonb,
        result jsonb,
        executed_at timestamptz,
        stale_at timestamptz,
        refusals jsonb not null default '{}'::jsonb
      )`);
    await queryRunner.query(
      `create index if not exists messaging_console_plan_created_idx on ${s}messaging_console_plan (created_at desc)`,
    );
    await queryRunner.query(`
      create or replace function ${s}messaging_console_plan_write_once() returns trigger
      language plpgsql as $$
      begin
        if (old.approval is not null and new.approval is distinct from old.approval)
           or (old.result is not null and new.result is distinct from old.result)
           or new.id <> old.id or new.plan <> old.plan or new.created_at <> old.created_at then
          raise exception 'messaging_console_plan: a plan, its approval and its result are written once';
        end if;
        return new;
      end $$`);
    await queryRunner.query(
      `drop trigger if exists messaging_console_plan_write_once on ${s}messaging_console_plan`,
    );
    await queryRunner.query(`
      create trigger messaging_console_plan_write_once before update on ${s}messaging_console_plan
      for each row execute function ${s}messaging_console_plan_write_once()`);
  }

  /** Reverts the migration. */
  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaPrefix(queryRunner);
    await queryRunner.query(`drop table if exists ${s}messaging_console_plan`);
    await queryRunner.query(`drop function if exists ${s}messaging_console_plan_write_once()`);
  }
}
