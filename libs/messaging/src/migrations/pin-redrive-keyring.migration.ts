import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 45, findings 5 and 6 (run it as the tables' owner):
 * - `messaging_redrive_keyring`: the fingerprint of the reviewed approver keyring, one row the owner writes
 *   (`nest-messaging db pin-keyring`); approve and execute refuse another keyring, whatever file the
 *   executor names. The everyday logins get SELECT on it only.
 * - the audit log keeps an approval's evidence (`evidence`: nonce, signature, times, key id, keyring, as the
 *   JSON text the writer gave) and who wrote each entry (`db_user`: the database login, `session_user`,
 *   stamped by the chain's trigger, never by the writer); both are in the chain's hash. An entry written
 *   before this migration has neither and keeps its hash (the two fields are hashed only when one is set).
 */
export class PinRedriveKeyring1765238400000 implements MigrationInterface {
  /** The migration's name, as TypeORM records it. */
  name = 'PinRedriveKeyring1765238400000';

  /** Applies the migration. */
  async up(queryRunner: QueryRunner): Promise<void> {
    const s = await qualifiedSchema(queryRunner);
    const audit = `${s}.messaging_redrive_audit`;
    const q = (sql: string) => queryRunner.query(sql);
    await q(`create table if not exists ${s}.messaging_redrive_keyring (
               id smallint primary key check (id = 1),
               fingerprint varchar(80) not null,
               pinned_at timestamptz not null default now())`);
    await q(`alter table ${audit} add column if not exists evidence text,
             add column if not exists db_user varchar(128)`);
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
                 || ${s}.messaging_redrive_audit_field(r.detail)
                 || case when r.evidence is null and r.db_user is null then ''
                      else ${s}.messaging_redrive_audit_field(r.evidence)
                        || ${s}.messaging_redrive_audit_field(r.db_user) end,
                 'UTF8')), 'hex') $$`);
    // The chain's trigger, now also naming the login that wrote the entry (a writer cannot choose it).
    await q(`create or replace function ${s}.messaging_redrive_audit_chain() returns trigger
             language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
             declare
               head record;
             begin
               select last_id, last_hash into strict head
                 from ${s}.messaging_redrive_audit_head where id = 1 for update;
               new.id := head.last_id + 1;
               new.at := date_trunc('milliseconds', clock_timestamp());
               new.db_user := session_user;
               new.prev_hash := head.last_hash;
               new.row_hash := ${s}.messaging_redrive_audit_hash(head.last_hash, new);
               update ${s}.messaging_redrive_audit_head set last_id = new.id, last_hash = new.row_hash
                 where id = 1;
               return new;
             end $$`);
  }

  /**
   * Drops the keyring's pin. The audit log's columns and the chain's functions stay: entries written since
   * carry evidence and login in their hash, and dropping them would break the chain.
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    const s = await qualifiedSchema(queryRunner);
    await queryRunner.query(`drop table if exists ${s}.messaging_redrive_keyring`);
  }
}

/** The schema, quoted: the DataSource's, or the current one (the functions' names are all qualified). */
async function qualifiedSchema(queryRunner: QueryRunner): Promise<string> {
  const configured = (queryRunner.connection.options as { schema?: string }).schema;
  const [{ schema }] = (await queryRunner.query('select current_schema() as schema')) as Array<{
    schema: string;
  }>;
  const name = configured ?? schema;
  return `"${name.replace(/"/g, '""')}"`;
}
