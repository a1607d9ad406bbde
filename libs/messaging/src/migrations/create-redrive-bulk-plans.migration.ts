import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaPrefix } from './create-messaging-tables.migration';

/**
 * The plan store of redrives at scale (`PostgresBulkPlanStore`, docs/guide/08-redrive.md "Incidents at
 * scale"): a plan's items in order (`messaging_redrive_bulk_item`) and its execution's progress
 * (`messaging_redrive_bulk_plan`). Once a plan is sealed (its hash set), a trigger refuses any change to its
 * items other than their status, and any item added or removed, also for the owner. Not trusted for what
 * counts: the signed plan carries the items' digest, which execution re-derives before anything moves, and
 * every message is checked against its description when it is read again.
 */
export class CreateRedriveBulkPlans1765497600000 implements MigrationInterface {
  /** The migration's name, as TypeORM records it. */
  name = 'CreateRedriveBulkPlans1765497600000';

  /** Applies the migration. */
  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaPrefix(queryRunner);
    await queryRunner.query(`
      create table if not exists ${s}messaging_redrive_bulk_plan (
        id uuid primary key,
        created_at timestamptz not null default now(),
        transport varchar(16) not null,
        source varchar(255) not null,
        plan_hash varchar(80),
        redrive_id uuid,
        nonce varchar(32),
        executed_by varchar(256),
        started_at timestamptz,
        finished_at timestamptz
      )`);
    await queryRunner.query(`
      create table if not exists ${s}messaging_redrive_bulk_item (
        plan_id uuid not null references ${s}messaging_redrive_bulk_plan (id),
        seq integer not null,
        role varchar(4) not null check (role in ('take', 'keep')),
        partition integer,
        message jsonb not null,
        status varchar(9) not null default 'PENDING' check (status in ('PENDING', 'IN_FLIGHT', 'DONE')),
        primary key (plan_id, seq)
      )`);
    await queryRunner.query(`
      create or replace function ${s}messaging_redrive_bulk_item_sealed() returns trigger
      language plpgsql as $$
      declare
        sealed boolean;
      begin
        select plan_hash is not null into sealed from ${s}messaging_redrive_bulk_plan
          where id = coalesce(new.plan_id, old.plan_id);
        if sealed and (tg_op <> 'UPDATE' or new.plan_id <> old.plan_id or new.seq <> old.seq
            or new.role <> old.role or new.message <> old.message
            or new.partition is distinct from old.partition) then
          raise exception 'messaging_redrive_bulk_item: the items of a sealed plan change in status only';
        end if;
        return coalesce(new, old);
      end $$`);
    await queryRunner.query(
      `drop trigger if exists messaging_redrive_bulk_item_sealed on ${s}messaging_redrive_bulk_item`,
    );
    await queryRunner.query(`
      create trigger messaging_redrive_bulk_item_sealed before insert or update or delete
      on ${s}messaging_redrive_bulk_item for each row execute function ${s}messaging_redrive_bulk_item_sealed()`);
    await queryRunner.query(`
      create or replace function ${s}messaging_redrive_bulk_plan_sealed() returns trigger
      language plpgsql as $$
      begin
        if old.plan_hash is not null and (new.plan_hash is distinct from old.plan_hash or new.id <> old.id
            or new.source <> old.source or new.transport <> old.transport) then
          raise exception 'messaging_redrive_bulk_plan: a sealed plan keeps its hash';
        end if;
        return new;
      end $$`);
    await queryRunner.query(
      `drop trigger if exists messaging_redrive_bulk_plan_sealed on ${s}messaging_redrive_bulk_plan`,
    );
    await queryRunner.query(`
      create trigger messaging_redrive_bulk_plan_sealed before update on ${s}messaging_redrive_bulk_plan
      for each row execute function ${s}messaging_redrive_bulk_plan_sealed()`);
  }

  /** Reverts the migration. */
  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaPrefix(queryRunner);
    await queryRunner.query(`drop table if exists ${s}messaging_redrive_bulk_item`);
    await queryRunner.query(`drop table if exists ${s}messaging_redrive_bulk_plan`);
    await queryRunner.query(`drop function if exists ${s}messaging_redrive_bulk_item_sealed()`);
    await queryRunner.query(`drop function if exists ${s}messaging_redrive_bulk_plan_sealed()`);
  }
}
