import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaPrefix } from './create-messaging-tables.migration';

/**
 * Creates `messaging_parked` on PostgreSQL, in the service's own database: with tenants on, a consumer keeps
 * there the deliveries of a tenant whose database does not answer (after `tenants.parkAfterMs`), settles them
 * on the broker, and applies them in `id` order once that database answers again. Read per (group, tenant) in
 * `id` order through `messaging_parked_lane_idx`. A service without tenants leaves it empty. Existing databases
 * upgrade by running it.
 */
export class CreateParkedDeliveries1765670400000 implements MigrationInterface {
  /** The migration's name, as TypeORM records it. */
  name = 'CreateParkedDeliveries1765670400000';

  /** Applies the migration. */
  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaPrefix(queryRunner);
    await queryRunner.query(`
      create table if not exists ${s}messaging_parked (
        id bigint generated always as identity primary key,
        group_name varchar(200) not null,
        tenant varchar(200) not null,
        destination varchar(255) not null,
        key text,
        headers jsonb not null,
        origin jsonb not null,
        body bytea not null,
        parked_at timestamptz not null default now()
      )`);
    await queryRunner.query(
      `create index if not exists messaging_parked_lane_idx on ${s}messaging_parked (group_name, tenant, id)`,
    );
  }

  /** Reverts it (deliveries still parked are dropped with the table: drain them first). */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`drop table if exists ${schemaPrefix(queryRunner)}messaging_parked`);
  }
}
