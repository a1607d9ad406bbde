import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 45, findings 11, 13 and 14 (run it as the tables' owner):
 * - `messaging_redrive_topology`: the fingerprint of the reviewed topology, one row the owner writes
 *   (`nest-messaging db pin-topology`), as `messaging_redrive_keyring` pins the keyring: approve and execute
 *   refuse another topology, whatever file the executor names. The everyday logins get SELECT on it only.
 * - the audit log keeps the safety overrides a run used (`overrides`: `insecure-transport`,
 *   `rewrite-rights`, comma-separated), in the chain's hash. An entry without overrides hashes as before.
 */
export class PinRedriveTopology1765324800000 implements MigrationInterface {
  /** The migration's name, as TypeORM records it. */
  name = 'PinRedriveTopology1765324800000';

  /** Applies the migration. */
  async up(queryRunner: QueryRunner): Promise<void> {
    const s = await qualifiedSchema(queryRunner);
    const audit = `${s}.messaging_redrive_audit`;
    const q = (sql: string) => queryRunner.query(sql);
    await q(`create table if not exists ${s}.messaging_redrive_topology (
               id smallint primary key check (id = 1),
               fingerprint varchar(80) not null,
               pinned_at timestamptz not null default now())`);
    await q(`alter table ${audit} add column if not exists overrides text`);
    const f = (column: string) => `${s}.messaging_redrive_audit_field(${column})`;
    await q(`create or replace function ${s}.messaging_redrive_audit_hash(prev text, r ${audit}) returns text
             language sql stable set search_path = pg_catalog, pg_temp as $$
               select 'sha256:' || encode(sha256(convert_to(
                 ${f('prev')} || ${f('r.id::text')}
                 || ${f(`to_char(r.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`)}
                 || ${f('r.action')} || ${f('r.actor')} || ${f('r.transport')} || ${f('r.source')}
                 || ${f('r.target')} || ${f('r.plan_hash')} || ${f('r.approver')} || ${f('r.redrive_id::text')}
                 || ${f(`(
                      select jsonb_array_length(r.message_ids)::text || '['
                        || coalesce(string_agg(${s}.messaging_redrive_audit_field(e.v), '' order by e.n), '') || ']'
                      from jsonb_array_elements_text(r.message_ids) with ordinality as e(v, n))`)}
                 || ${f('r.outcome')} || ${f('r.detail')}
                 || case when r.evidence is null and r.db_user is null then ''
                      else ${f('r.evidence')} || ${f('r.db_user')} end
                 || case when r.overrides is null then '' else ${f('r.overrides')} end,
                 'UTF8')), 'hex') $$`);
  }

  /**
   * Drops the topology's pin. The audit log's column and the hash function stay: entries written since
   * carry their overrides in their hash, and dropping them would break the chain.
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    const s = await qualifiedSchema(queryRunner);
    await queryRunner.query(`drop table if exists ${s}.messaging_redrive_topology`);
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
