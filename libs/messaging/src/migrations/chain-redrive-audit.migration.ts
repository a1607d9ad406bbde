import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The previous hash of the chain's first entry, written out here: a migration keeps the SQL it shipped with
 * (and stays below the redrive code); its spec checks that it still equals the ledger's `AUDIT_CHAIN_GENESIS`.
 */
const AUDIT_CHAIN_GENESIS = `sha256:${'0'.repeat(64)}`;

/**
 * Makes the redrive audit log hard to bend for the login the CLI and the console use (run it as the
 * tables' owner; that login gets SELECT and INSERT only, `nest-messaging db grant`):
 * - each entry's `id` and `at` are set by the database (a back-dated or out-of-order insert is not
 *   possible), and each entry is chained to the one before by a SHA-256 over its fields and the previous
 *   hash (`prev_hash`, `row_hash`), serialised by a one-row head table (`messaging_redrive_audit_head`),
 *   which a trigger running as the owner updates; existing entries are chained in id order;
 * - TRUNCATE is refused on the audit log, the used approvals and the head, as UPDATE and DELETE already are
 *   on the audit log (and now on the used approvals: an approval stays used).
 * The hash is recomputed by `PostgresRedriveLedger.verifyChain()` (`nest-messaging dlq history --verify`).
 */
export class ChainRedriveAudit1764979200000 implements MigrationInterface {
  /** The migration's name, as TypeORM records it. */
  name = 'ChainRedriveAudit1764979200000';

  /** Applies the migration. */
  async up(queryRunner: QueryRunner): Promise<void> {
    const s = await qualifiedSchema(queryRunner);
    const audit = `${s}.messaging_redrive_audit`;
    const q = (sql: string) => queryRunner.query(sql);
    await q(`alter table ${audit} add column if not exists prev_hash varchar(80),
             add column if not exists row_hash varchar(80)`);
    await q(`create table if not exists ${s}.messaging_redrive_audit_head (
               id smallint primary key check (id = 1),
               last_id bigint not null,
               last_hash varchar(80) not null)`);
    // Each field as <bytes>:<text>, or '-' for null: no separator inside a value can shift another.
    await q(`create or replace function ${s}.messaging_redrive_audit_field(value text) returns text
             language sql immutable as $$
               select case when value is null then '-' else octet_length(value)::text || ':' || value end $$`);
    await q(`create or replace function ${s}.messaging_redrive_audit_hash(prev text, r ${audit}) returns text
             language sql stable set search_path = pg_catalog, pg_temp as $$
               select 'sha256:' || encode(sha256(convert_to(
                 ${s}.messaging_redrive_audit_field(prev)
                 || ${s}.messaging_redrive_audit_field(r.id::text)
                 || ${s}.messaging_redrive_audit_field(
                      to_char(r.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                 || ${s}.messaging_redrive_audit_field(r.action)
                 || ${s}.messaging_redrive_audit_field(r.actor)
                 || ${s}.messaging_redrive_audit_field(r.transport)
                 || ${s}.messaging_redrive_audit_field(r.source)
                 || ${s}.messaging_redrive_audit_field(r.target)
                 || ${s}.messaging_redrive_audit_field(r.plan_hash)
                 || ${s}.messaging_redrive_audit_field(r.approver)
                 || ${s}.messaging_redrive_audit_field(r.redrive_id::text)
                 || ${s}.messaging_redrive_audit_field((
                      select jsonb_array_length(r.message_ids)::text || '['
                        || coalesce(string_agg(${s}.messaging_redrive_audit_field(e.v), '' order by e.n), '') || ']'
                      from jsonb_array_elements_text(r.message_ids) with ordinality as e(v, n)))
                 || ${s}.messaging_redrive_audit_field(r.outcome)
                 || ${s}.messaging_redrive_audit_field(r.detail),
                 'UTF8')), 'hex') $$`);
    // Existing entries: timestamps to the millisecond (what the chain hashes), then chained in id order.
    await q(`alter table ${audit} disable trigger messaging_redrive_audit_append_only`);
    await q(`update ${audit} set at = date_trunc('milliseconds', at)`);
    await q(`do $$
             declare
               r record;
               prev text := '${AUDIT_CHAIN_GENESIS}';
               last bigint := 0;
             begin
               for r in select * from ${audit} order by id loop
                 update ${audit} set prev_hash = prev, row_hash = ${s}.messaging_redrive_audit_hash(prev, r)
                   where id = r.id returning row_hash into prev;
                 last := r.id;
               end loop;
               insert into ${s}.messaging_redrive_audit_head (id, last_id, last_hash)
                 values (1, last, prev) on conflict (id) do nothing;
             end $$`);
    await q(`alter table ${audit} enable trigger messaging_redrive_audit_append_only`);
    // The chain: runs as the owner (the inserting login may not touch the head), under the head's row lock.
    await q(`create or replace function ${s}.messaging_redrive_audit_chain() returns trigger
             language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
             declare
               head record;
             begin
               select last_id, last_hash into strict head
                 from ${s}.messaging_redrive_audit_head where id = 1 for update;
               new.id := head.last_id + 1;
               new.at := date_trunc('milliseconds', clock_timestamp());
               new.prev_hash := head.last_hash;
               new.row_hash := ${s}.messaging_redrive_audit_hash(head.last_hash, new);
               update ${s}.messaging_redrive_audit_head set last_id = new.id, last_hash = new.row_hash
                 where id = 1;
               return new;
             end $$`);
    await q(`drop trigger if exists messaging_redrive_audit_chain on ${audit}`);
    await q(`create trigger messaging_redrive_audit_chain before insert on ${audit}
             for each row execute function ${s}.messaging_redrive_audit_chain()`);
    await q(`create or replace function ${s}.messaging_redrive_append_only() returns trigger
             language plpgsql as $$
             begin
               raise exception '% is append-only (% refused)', tg_table_name, tg_op;
             end $$`);
    for (const [table, operations] of [
      ['messaging_redrive_audit', 'truncate'],
      ['messaging_redrive_nonce', 'update or delete or truncate'],
      ['messaging_redrive_audit_head', 'delete or truncate'],
    ]) {
      await q(`drop trigger if exists ${table}_append_only_more on ${s}.${table}`);
      await q(`create trigger ${table}_append_only_more before ${operations} on ${s}.${table}
               for each statement execute function ${s}.messaging_redrive_append_only()`);
    }
    await q(`create index if not exists messaging_redrive_audit_plan_idx on ${audit} (plan_hash)
             where action = 'PLAN'`);
  }

  /** Reverts the migration (the chain's columns and their hashes are dropped). */
  async down(queryRunner: QueryRunner): Promise<void> {
    const s = await qualifiedSchema(queryRunner);
    const q = (sql: string) => queryRunner.query(sql);
    await q(`drop index if exists ${s}.messaging_redrive_audit_plan_idx`);
    for (const table of [
      'messaging_redrive_audit',
      'messaging_redrive_nonce',
      'messaging_redrive_audit_head',
    ]) {
      await q(`drop trigger if exists ${table}_append_only_more on ${s}.${table}`);
    }
    await q(`drop trigger if exists messaging_redrive_audit_chain on ${s}.messaging_redrive_audit`);
    await q(`drop function if exists ${s}.messaging_redrive_append_only()`);
    await q(`drop function if exists ${s}.messaging_redrive_audit_chain()`);
    await q(`drop function if exists ${s}.messaging_redrive_audit_hash(text, ${s}.messaging_redrive_audit)`);
    await q(`drop function if exists ${s}.messaging_redrive_audit_field(text)`);
    await q(`drop table if exists ${s}.messaging_redrive_audit_head`);
    await q(`alter table ${s}.messaging_redrive_audit drop column if exists prev_hash,
             drop column if exists row_hash`);
  }
}

/**
 * The schema, quoted: the DataSource's, or the current one. The chain's functions run with a fixed
 * search_path (a security definer must not resolve names through the caller's), so every name is qualified.
 */
async function qualifiedSchema(queryRunner: QueryRunner): Promise<string> {
  const configured = (queryRunner.connection.options as { schema?: string }).schema;
  const [{ schema }] = (await queryRunner.query('select current_schema() as schema')) as Array<{
    schema: string;
  }>;
  const name = configured ?? schema;
  return `"${name.replace(/"/g, '""')}"`;
}
