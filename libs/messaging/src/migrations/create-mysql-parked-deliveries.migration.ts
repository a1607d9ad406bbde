import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Creates `messaging_parked` on MySQL and MariaDB, in the service's own database: a tenant's deliveries parked
 * while its database does not answer (see `CreateParkedDeliveries…` for PostgreSQL). Existing databases upgrade
 * by running it.
 */
export class CreateMysqlParkedDeliveries1765670400000 implements MigrationInterface {
  /** The migration's name, as TypeORM records it. */
  name = 'CreateMysqlParkedDeliveries1765670400000';

  /** Applies the migration. */
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      create table if not exists messaging_parked (
        id bigint not null auto_increment,
        group_name varchar(200) not null,
        tenant varchar(200) not null,
        destination varchar(255) not null,
        \`key\` text,
        headers json not null,
        origin json not null,
        body longblob not null,
        parked_at datetime(6) not null default current_timestamp(6),
        primary key (id),
        key messaging_parked_lane_idx (group_name, tenant, id)
      ) engine = InnoDB default character set utf8mb4 collate utf8mb4_bin`);
  }

  /** Reverts it (deliveries still parked are dropped with the table: drain them first). */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('drop table if exists messaging_parked');
  }
}
